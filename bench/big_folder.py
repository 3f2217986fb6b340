"""Figures: `vis run` in a big folder that is not a git repository (a home or data folder).

Makes (once) a synthetic folder: 200,000 small files in 2,000 nested folders and three
120 MB files. Then, each in a fresh VIS_HOME: `vis run` of one trivial block and of one
block that edits one file (scripted provider), printing the wall time and what the session's
checkpoints hold (files and bytes copied, manifest size); the TUI's first block (the time
from the request to the block's row, and key latency meanwhile); then, in this process, the
parts of a checkpoint: one listing and one `take`; and a long session: 25 turns, each one
`take` after a few files changed, printing each turn's time and what the checkpoints hold.
Edited files are put back afterwards. Compare two versions by running this script with
``PYTHONPATH=<other vis_core's parent>``.
Run: ``.venv/bin/python bench/big_folder.py [--long] [FOLDER]`` (default /tmp/vis-big-folder;
``--long``: the long session only).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL = (40, 50, 100)  # projects × folders × files
BIG = 3
SCRIPTS = {
    "trivial block": [{"code": "print(1 + 1)"}, {"text": "done"}],
    "edit one file": [
        {"code": "open('proj03/dir07/f042.txt', 'a').write('edited\\n')"},
        {"text": "done"},
    ],
}


def make(root: Path) -> None:
    """The synthetic folder, unless it is there already."""
    if (root / "notes.txt").exists():
        return
    rng = random.Random(7)
    projects, folders, files = SMALL
    for a in range(projects):
        for b in range(folders):
            folder = root / f"proj{a:02d}" / f"dir{b:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            for c in range(files):
                size = rng.choice((200, 800, 1500, 3000, 6000))
                (folder / f"f{c:03d}.txt").write_bytes(os.urandom(size // 2).hex().encode())
    (root / "data").mkdir(exist_ok=True)
    for n in range(BIG):
        with open(root / "data" / f"big{n}.bin", "wb") as out:
            for _ in range(120):
                out.write(os.urandom(1 << 20))
    (root / "notes.txt").write_text("hello\n")


def held(home: Path, pattern: str = "checkpoints/*/") -> str:
    """What the session's checkpoints hold: copied files and bytes, manifests' size."""
    blobs = list(home.glob(f"{pattern}blobs/*"))
    manifests = list(home.glob(f"{pattern}*.json"))
    copied = sum(b.stat().st_size for b in blobs)
    listed = sum(m.stat().st_size for m in manifests)
    return (
        f"{len(blobs):,} files / {copied / 2**20:.1f} MB copied, manifests {listed / 2**20:.1f} MB"
    )


def run(root: Path, steps: list[dict[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, script = Path(tmp) / "home", Path(tmp) / "script.json"
        script.write_text(json.dumps(steps))
        env = {**os.environ, "VIS_HOME": str(home)}
        env = {k: v for k, v in env.items() if not k.endswith("_API_KEY")}
        command = [sys.executable, "-m", "vis_core.cli", "run", "--provider", "scripted"]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "--script", str(script), "go"], cwd=root, env=env, capture_output=True
        )
        took = time.perf_counter() - started
        line = done.stdout.decode(errors="replace").splitlines()[:1]
        print(f"  {took:6.1f} s  {held(home)}  {line}")


async def first_block(root: Path, script: Path) -> None:
    """The TUI's first block: request → BlockFinished → TurnEnded, keys typed meanwhile."""
    import asyncio

    from textual import events

    from vis_core.host import HostOptions
    from vis_tui.app import VisApp

    app = VisApp(HostOptions(workspace=root, provider="scripted", script=script), frozen=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 60)
        await pilot.pause()
        prompt = app.main.prompt
        prompt.focus()
        seen: dict[str, float] = {}
        assert app.session is not None
        app.session.subscribe(lambda e: seen.setdefault(type(e).__name__, time.perf_counter()))
        start = time.perf_counter()
        app.main.start_turn("go")
        latencies = []
        while "TurnEnded" not in seen:
            before, typed = len(prompt.text), time.perf_counter()
            app.post_message(events.Key("x", "x"))
            while len(prompt.text) == before:
                await asyncio.sleep(0.0005)
            latencies.append((time.perf_counter() - typed) * 1000)
            await asyncio.sleep(0.02)
    latencies.sort()
    print(
        f"  block finished after {seen['BlockFinished'] - start:.1f} s, turn ended after "
        f"{seen['TurnEnded'] - start:.1f} s; {len(latencies)} keys meanwhile: median "
        f"{latencies[len(latencies) // 2]:.0f} ms, worst {latencies[-1]:.0f} ms"
    )


def tui(root: Path) -> None:
    """``first_block`` in a fresh process and VIS_HOME."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(SCRIPTS["trivial block"]))
        env = {**os.environ, "VIS_HOME": str(Path(tmp) / "home")}
        subprocess.run([sys.executable, __file__, "--tui", str(root), str(script)], env=env)


def parts(root: Path) -> None:
    from vis_core.tools.checkpoints import Checkpoints

    with tempfile.TemporaryDirectory() as tmp:
        points = Checkpoints(root, Path(tmp) / "points")
        started = time.perf_counter()
        listed = points.scan()
        scanned = time.perf_counter() - started
        started = time.perf_counter()
        points.take("t1", 1)
        took = time.perf_counter() - started
        print(f"  one listing ({len(listed):,} files): {scanned:.2f} s; one take: {took:.2f} s")


def long_session(root: Path, turns: int = 25) -> None:
    """``turns`` turns in a row as a session runs them: the checkpoint (`take`), three files
    changed, the turn's end (`drop_if_unchanged`, given its last block's listing; past
    ``KEEP`` it prunes). Each turn's wall time (the listing's share apart) and CPU time, and
    what the checkpoints hold. After every fifth, a turn that changes nothing (its
    checkpoint dropped at its end)."""
    from vis_core.tools.checkpoints import Checkpoints

    rng = random.Random(11)
    originals: dict[Path, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        points = Checkpoints(root, Path(tmp) / "points")
        listing = points.scan
        listed: list[tuple[float, float]] = []  # each listing's wall and CPU time

        def timed_scan() -> dict[str, os.stat_result]:
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return listing()
            finally:
                listed.append((time.perf_counter() - started, time.process_time() - cpu))

        def turn(name: str, edits: int) -> str:
            started, cpu = time.perf_counter(), time.process_time()
            taken = points.take(name, 0)
            took, cpu = time.perf_counter() - started, time.process_time() - cpu
            assert taken is not None
            seen = {rel: (f[0], f[1]) for rel, f in taken.files.items()}  # its block's listing
            for _ in range(edits):
                a, b, c = rng.randrange(40), rng.randrange(50), rng.randrange(100)
                rel = f"proj{a:02d}/dir{b:02d}/f{c:03d}.txt"
                originals.setdefault(root / rel, (root / rel).read_bytes())
                with open(root / rel, "a") as out:
                    out.write(f"{name}\n")
                st = (root / rel).stat()
                seen[rel] = (st.st_size, st.st_mtime_ns)
            started, cpu = time.perf_counter(), cpu - time.process_time()
            assert points.drop_if_unchanged(name, seen) == (edits == 0)
            ended, cpu = time.perf_counter() - started, cpu + time.process_time()
            wall, listing_cpu = listed[-1]
            return (
                f"take {took:5.2f} s (listing {wall:4.2f} s), end {ended:4.2f} s; "
                f"CPU {cpu:4.2f} s (listing {listing_cpu:4.2f} s)"
            )

        points.scan = timed_scan  # type: ignore[method-assign]
        try:
            for n in range(1, turns + 1):
                print(f"  turn {n:2d}: {turn(f't{n}', 3)}; {held(Path(tmp), 'points/')}")
                if n % 5 == 0:
                    print(f"  turn {n:2d}b, changes nothing: {turn(f'look{n}', 0)}")
        finally:
            for path, data in originals.items():
                path.write_bytes(data)


def main() -> None:
    if sys.argv[1:2] == ["--tui"]:
        import asyncio

        asyncio.run(first_block(Path(sys.argv[2]), Path(sys.argv[3])))
        return
    only_long = sys.argv[1:2] == ["--long"]
    args = sys.argv[2:] if only_long else sys.argv[1:]
    root = Path(args[0] if args else "/tmp/vis-big-folder")
    root.mkdir(parents=True, exist_ok=True)
    make(root)
    edited = root / "proj03" / "dir07" / "f042.txt"
    original = edited.read_bytes()
    import vis_core

    print(f"vis_core: {Path(vis_core.__file__).parent}; load {os.getloadavg()[0]:.1f}")
    if only_long:
        print("long session, in process")
        long_session(root)
        print(f"load {os.getloadavg()[0]:.1f}")
        return
    try:
        for name, steps in SCRIPTS.items():
            print(name)
            run(root, steps)
            edited.write_bytes(original)
        print("TUI, first block (trivial)")
        tui(root)
        print("in process")
        parts(root)
        print("long session, in process")
        long_session(root)
    finally:
        edited.write_bytes(original)
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
