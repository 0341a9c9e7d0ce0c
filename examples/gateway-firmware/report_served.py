"""The section "The served gateway" of docs/embedded.md, for report.py: budgets of the
gateway-stdio-* (every family) and gateway-http-* (Cortex-M4F) binaries, from their ELFs and
from the logs of the scripted sessions ci/embedded-report.sh runs with the `measure` build
(measure_serve.py drives them; src/serve/measure.rs logs one line per request).

LOG_DIR/TARGET/measure/ holds, per served binary BIN: BIN (the measuring ELF), BIN.log (its
decoded defmt log) and BIN.labels.json (what each measured request was, in order).
"""

import json
import re
import subprocess
import sys

AEADS = [
    ("aes-gcm", "AES-256-GCM"),
    ("chacha20poly1305", "ChaCha20-Poly1305"),
    ("xchacha20poly1305", "XChaCha20-Poly1305"),
    ("aes-gcm-siv", "AES-256-GCM-SIV"),
]
M4F = "thumbv7em-none-eabihf"
M0 = "thumbv6m-none-eabi"
REQUEST_STACK_GOAL = 4 * 1024
MICROBIT_FLASH = 256 * 1024
MICROBIT_RAM = 16 * 1024
PAUSED = "set_output round 1 (paused)"
RESUMED = "set_output round 2 (resumed)"
REQUEST = re.compile(
    r"measure: op=request seq=(\d+) method=(\S+) tool=(\S+) state=(\d) request=(\d+) "
    r"instructions=(\d+) stack=(\d+) since_boot=(\d+) digest_instructions=(\d+) "
    r"digest_stack=(\d+) digest=(true|false)")
ARGS_DIGEST = re.compile(
    r"measure: op=args_digest request=(\d+) stack=(\d+) ticks=(\d+) instructions=(\d+)")


def served(target):
    """(transport, aead, binary) of the served gateways built for `target`."""
    out = [("stdio", a, f"gateway-stdio-{a}") for a, _ in AEADS]
    if target == M4F:
        out += [("http", a, f"gateway-http-{a}") for a, _ in AEADS]
    return out


def parse_session(log_path, labels_path):
    """The measured requests of one session, by label, and the whole-run stack figures."""
    text = log_path.read_text()
    labels = json.loads(labels_path.read_text())
    lines = [m.groups() for m in REQUEST.finditer(text)]
    sp = re.search(r"measure: serving sp=0x([0-9a-f]+)", text)
    if not sp:
        sys.exit(f"{log_path}: no serving stack pointer")
    if len(lines) < len(labels):
        # The session was served (measure_serve.py checked every answer) but not measured:
        # the stack overwrote the statics at the bottom of RAM, the meter's among them.
        return {"requests": None, "sp": int(sp.group(1), 16), "whole": None}
    requests = {}
    for label, g in zip(labels, lines[len(lines) - len(labels):]):
        _, method, tool, state = g[:4]
        if (method, tool, int(state)) != (label["method"], label["tool"], label["state"]):
            sys.exit(f"{log_path}: request {g[0]} is {method} {tool} state={state}, "
                     f"expected {label}")
        if g[10] != "true":
            sys.exit(f"{log_path}: the arguments of {label['kind']} did not digest")
        requests[label["kind"]] = {
            "bytes": int(g[4]), "instructions": int(g[5]), "stack": int(g[6]),
            "digest_instructions": int(g[8]), "digest_stack": int(g[9]),
        }
    # Boot (stdio: "stack peak so far", before the first request; HTTP: "boot stack peak",
    # which it measures before repainting) and every request's since-boot figure.
    peaks = [int(x) for x in re.findall(r"stack peak so far: (\d+) B", text)]
    peaks += [int(x) for x in re.findall(r"boot stack peak (\d+) B", text)]
    peaks += [int(g[7]) for g in lines]
    return {"requests": requests, "sp": int(sp.group(1), 16), "whole": max(peaks)}


def symbol(elf, name):
    """The address of symbol `name` in `elf`."""
    out = subprocess.run(["llvm-nm", str(elf)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    sys.exit(f"{elf}: no symbol {name}")


def code_of(elf, pattern):
    """Total size of the functions whose (demangled) names match `pattern`."""
    out = subprocess.run(["llvm-nm", "-C", "--print-size", str(elf)], check=True,
                         capture_output=True, text=True).stdout
    total = 0
    for line in out.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[2] in "tT" and re.search(pattern, parts[3]):
            total += int(parts[1], 16)
    return total


def digest_of_selfcheck(log_dir, target, aead):
    m = ARGS_DIGEST.search((log_dir / target / f"{aead}.log").read_text())
    if not m:
        sys.exit(f"{target}/{aead}.log: no op=args_digest measurement")
    return {"bytes": int(m.group(1)), "stack": int(m.group(2)), "instructions": int(m.group(4))}


def section(w, ctx):
    """Writes the section. `ctx`: target_dir, log_dir, targets (report.py's TARGETS),
    logs (the self-check logs, parsed), flash_ram, kib, goal (report.py's)."""
    log_dir, targets, kib = ctx["log_dir"], ctx["targets"], ctx["kib"]
    runs = {}
    for t, machine, family, ram, _ in targets:
        for transport, aead, binary in served(t):
            d = log_dir / t / "measure"
            normal = ctx["target_dir"] / t / "release" / binary
            flash, sram = ctx["flash_ram"](normal)
            s = parse_session(d / f"{binary}.log", d / f"{binary}.labels.json")
            above = symbol(normal, "_stack_start") - s["sp"]
            floor = "__estack" if t.startswith("riscv") else "_stack_end"
            s["room"] = s["sp"] - symbol(d / binary, floor)
            code = [code_of(e, r"mcp::|mrtr_core|mrtr_json") for e in (normal, d / binary)]
            handle = [code_of(e, r"mcp::Server.*::handle") for e in (normal, d / binary)]
            runs[(t, transport, aead)] = dict(s, flash=flash, sram=sram, above=above, ram=ram,
                                              family=family, code=code, handle=handle)

    w("## The served gateway")
    w("")
    w("The gateway as an MCP server (protocol 2026-07-28): `gateway-stdio-<backend>` on every")
    w("family (JSON-RPC lines over the board's UART), `gateway-http-<backend>` on the Cortex-M4F")
    w("(Streamable HTTP over smoltcp on the mps2-an386's LAN9118). Flash and static RAM are the")
    w("binaries `serve.sh` runs. The rest comes from the same sources built with the cargo")
    w("feature `measure` (`src/serve/measure.rs`), which wraps each request the transport hands")
    w("to `Server::handle` — parse, argument digest, open, seal, replay record, PWM change, and")
    w("writing the response (onto the UART; into the socket's transmit buffer for HTTP) — in")
    w("a stack painting and an instruction count, and logs one line per request (for HTTP, the")
    w("TCP/IP work, smoltcp's poll and the LAN9118's FIFOs, comes after, in the serving loop's")
    w("next poll, and is not counted; nor is reading the request). Off, the hooks")
    w("are pass-throughs and the binaries carry no measuring code; a config line would ship it")
    w("in every gateway. The measured code is the shipped code, within what LLVM's inlining")
    code = max(abs(r["code"][1] - r["code"][0]) for r in runs.values())
    handle = max(abs(r["handle"][1] - r["handle"][0]) for r in runs.values())
    total = max(r["code"][0] for r in runs.values())
    w(f"shifts: the functions of the MCP server, mrtr-core and mrtr-json (up to {total} B in a")
    w(f"binary, `llvm-nm` sizes) differ by at most {code} B between the two builds, `Server::handle`")
    w(f"by at most {handle} B.")
    w("")
    w("`measure_serve.py` drives each binary under QEMU (`-icount shift=0`) with raw JSON-RPC and")
    w("checks every answer: `server/discover`, `tools/list`, `set_output {channel: 2, duty: 75}`")
    w("paused for its confirmation (round 1) and resumed with it (round 2: the PWM duty changes),")
    w("`get_outputs`, and `calibrate` through its three questions (rounds 1–4). The session's")
    w("configuration has a fixed seed and key (an example, like the self-check binaries' keys),")
    w("so every run seals the same bytes.")
    w("")
    w("* **stack, whole run**: the deepest the stack went since the serving loop was entered,")
    w("  boot included (configuration parse, key ring, engine), plus the frames above that")
    w("  loop (reset handler, `main`); with static RAM, what the machine's RAM must hold.")
    w("* **request stack**: the deepest request of the session, below the serving loop's frame")
    w("  (the request kind in brackets); goal on the Cortex-M4F ≤ "
      f"{REQUEST_STACK_GOAL} B.")
    w("* **paused** / **resumed**: instructions of `set_output` round 1 (parse, digest, seal,")
    w("  write) and round 2 (parse, digest, open, replay record, PWM change, write).")
    w("")
    w("| family | transport | backend | flash | static RAM | stack, whole run | RAM used of the machine's | request stack | paused | resumed |")
    w("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for t, machine, family, ram, _ in targets:
        for transport, aead, _ in served(t):
            r = runs[(t, transport, aead)]
            name = dict(AEADS)[aead]
            if r["requests"] is None:
                w(f"| {family} | {transport} | {name} | {r['flash']} B ({kib(r['flash'])}) | "
                  f"{r['sram']} B | **overflows** | **over {kib(ram)}** | — | — | — |")
                continue
            kind, deepest = max(r["requests"].items(), key=lambda kv: kv[1]["stack"])
            whole = r["above"] + r["whole"]
            w(f"| {family} | {transport} | {name} | {r['flash']} B ({kib(r['flash'])}) | "
              f"{r['sram']} B | {whole} B | {kib(r['sram'] + whole)} of {kib(ram)} | "
              f"{deepest['stack']} B ({short(kind)}) | {r['requests'][PAUSED]['instructions']} | "
              f"{r['requests'][RESUMED]['instructions']} |")
    w("")
    overflowed = [(t, tr, a) for (t, tr, a), r in runs.items() if r["requests"] is None]
    if overflowed:
        r = runs[overflowed[0]]
        w("**Overflows**: " + ", ".join(f"{runs[(t, tr, a)]['family']} {tr} {dict(AEADS)[a]}"
                                      for t, tr, a in overflowed)
          + ". Every answer of the session was right, but the stack ran past the")
        w(f"{r['room']} bytes between the serving loop's frame and the end of static RAM")
        w("(cortex-m-rt's `_stack_end`) and overwrote the statics there, the meter's among them, so no")
        w("request was measured. The boot does it, before the first request: see the goals below.")
        w("")
    kinds_table(w, targets, runs)
    digest_table(w, ctx, runs)
    goals(w, ctx, runs)


def short(kind):
    return kind.replace(" (paused)", "").replace(" (resumed)", "")


def kinds_table(w, targets, runs):
    columns = [(t, tr, f"{family} {tr}") for t, _, family, _, _ in targets
               for tr, a, _ in served(t)
               if a == "aes-gcm" and runs[(t, tr, a)]["requests"] is not None]
    w("Every request kind, AES-256-GCM (peak stack / instructions; SysTick resolution on")
    w("Cortex-M: 62.5, 80 and 40 instructions):")
    w("")
    w("| request | " + " | ".join(c[2] for c in columns) + " |")
    w("| --- |" + " ---: |" * len(columns))
    kinds = list(runs[(columns[0][0], columns[0][1], "aes-gcm")]["requests"])
    for kind in kinds:
        cells = []
        for t, tr, _ in columns:
            r = runs[(t, tr, "aes-gcm")]["requests"][kind]
            cells.append(f"{r['stack']} B / {r['instructions']}")
        w(f"| {kind} | " + " | ".join(cells) + " |")
    w("")


def digest_table(w, ctx, runs):
    log_dir, logs, goal = ctx["log_dir"], ctx["logs"], ctx["goal"]
    w("### The argument digest next to the seal (Cortex-M4F)")
    w("")
    w("Every `tools/call` binds its token to the SHA-256 of its canonical arguments")
    w("(`mrtr_json::args_digest`, RFC 8785). The self-check binaries measure parsing a typical")
    w("309-byte `tools/call` request (9 arguments) and digesting its arguments (`op=args_digest`),")
    w("next to one seal at the gateway's AAD capacity with a 256-byte continuation; the served")
    w("gateway measures the digest alone of each request it served, after the request (the")
    w("request already parsed, as the server holds it). Goal: the digest costs no more than the")
    w("seal.")
    w("")
    w("| backend | self-check: parse + digest, 309-byte request | self-check: seal | served `set_output`: digest | served `calibrate` round 4: digest | goal |")
    w("| --- | ---: | ---: | ---: | ---: | --- |")
    for aead, name in AEADS:
        d = digest_of_selfcheck(log_dir, M4F, aead)
        seal = logs[(M4F, aead)]["ops"][("seal", "gateway")]["instructions"]
        s = runs[(M4F, "stdio", aead)]["requests"]
        served_d = s[PAUSED]["digest_instructions"]
        cal = s["calibrate round 4"]["digest_instructions"]
        ok = max(d["instructions"], served_d, cal) <= seal
        w(f"| {name} | {d['instructions']} ({d['stack']} B stack) | {seal} | {served_d} "
          f"({s[PAUSED]['digest_stack']} B stack) | {cal} | {goal(ok)} |")
    w("")


def goals(w, ctx, runs):
    kib, goal = ctx["kib"], ctx["goal"]
    w("### Goals")
    w("")
    # The micro:bit: flash and RAM, every AEAD but GCM-SIV must fit.
    fits = {}
    for aead, name in AEADS:
        r = runs[(M0, "stdio", aead)]
        if r["requests"] is None:
            fits[aead] = (False, r["flash"], None)
            continue
        used = r["sram"] + r["above"] + r["whole"]
        fits[aead] = (r["flash"] <= MICROBIT_FLASH and used <= MICROBIT_RAM, r["flash"], used)
    must = [a for a, _ in AEADS if a != "aes-gcm-siv"]
    ok = all(fits[a][0] for a in must)
    w("* The UART gateway fits the micro:bit (256 KiB flash, 16 KiB RAM: static RAM + stack,")
    w(f"  boot included) with every backend but GCM-SIV: {goal(ok)}. " + "; ".join(
        f"{name}: {kib(fits[a][1])} flash, "
        + (f"{kib(fits[a][2])} RAM" if fits[a][2] is not None else "RAM **overflows**")
        for a, name in AEADS) + ".")
    if not ok:
        bad = ", ".join(name for a, name in AEADS if a in must and not fits[a][0])
        w(f"  Over: {bad}. Flash is not the problem; the stack is, at boot (the ChaCha engines")
        w("  hold 32-byte keys, AES-256-GCM's its expanded round keys): `Server::init` builds the")
        w("  engine (key ring with the ciphers' key schedules, replay set handle, clock) on its own")
        w("  stack frame and moves it into the caller's slot, under `serve::configure` and the")
        w("  serving loop's own frame, which holds that slot. Largest boot frames (`llvm-objdump`")
        w("  prologues; the Cortex-M0 sets large frames through a register, which the scan does")
        w("  not follow, so the M4F's are shown):" + boot_frames(ctx) + ". A request alone")
        w("  stays far below that (the table above). Fix: build the engine in place (a")
        w("  `static` or a `MaybeUninit` slot written field by field, or a builder that writes")
        w("  into `&mut Option<Codec>`), so the boot's peak is a request's, not a key ring's")
        w("  copies; and on the micro:bit, the 2 KiB line and 2.5 KiB response buffers are the")
        w("  other large item of static RAM.")
    worst = max(((tr, a, k, q["stack"]) for (t, tr, a), r in runs.items() if t == M4F
                 for k, q in (r["requests"] or {}).items()), key=lambda x: x[3])
    ok = worst[3] <= REQUEST_STACK_GOAL
    w(f"* A whole request's peak stack ≤ {REQUEST_STACK_GOAL} B on the Cortex-M4F: {goal(ok)}; the")
    w(f"  deepest is {worst[3]} B ({dict(AEADS)[worst[1]]}, {worst[0]}, {worst[2]}).")
    worst_digest = []
    for aead, name in AEADS:
        seal = ctx["logs"][(M4F, aead)]["ops"][("seal", "gateway")]["instructions"]
        d = digest_of_selfcheck(ctx["log_dir"], M4F, aead)["instructions"]
        served_d = max(q["digest_instructions"] for q in runs[(M4F, "stdio", aead)]["requests"].values())
        worst_digest.append((d / seal, name, d, seal, served_d))
    ratio, name, d, seal, served_d = max(worst_digest)
    over = [n for r, n, *_ in worst_digest if r > 1]
    w(f"* The digest costs no more than the seal on the Cortex-M4F: {goal(ratio <= 1)}"
      + (f" for {', '.join(over)}" if over else "") + f". Worst: {name}, whose seal")
    w(f"  ({seal} instructions) the 309-byte request's parse and digest ({d}) reach to")
    w(f"  {ratio:.0%}; the served requests' digests alone (at most {served_d}, small integer and")
    w("  string arguments) stay within every backend's seal.")
    w("")


def boot_frames(ctx):
    """The largest frames among the boot's functions, M4F stdio AES-256-GCM."""
    elf = ctx["target_dir"] / M4F / "release" / "gateway-stdio-aes-gcm"
    names = ("Server<C>::init", "serve::stdio", "serve::configure", "serve::read_config")
    found = []
    for fn, size in ctx["all_frames"](elf):
        hit = next((n for n in names if n in fn), None)
        if hit and hit not in [h for h, _ in found]:
            found.append((hit, size))
    return " " + ", ".join(f"`{n}` {size} B" for n, size in found)
