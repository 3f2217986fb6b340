"""Figure: the first ``patch`` of a 100,000-line ``.py`` file, from a block, through the Host.

A scripted turn reads the file with ``cat`` and patches one line in its middle; the block times
the ``patch`` call (the tool round trip, the syntax check, the write, the diff and the stored
Activity). Beside it, in the same run: one full ``ast.parse`` of the file (what the first
check used to cost). Target: ≤ 50 ms.
Run: ``.venv/bin/python bench/first_patch.py``.
"""

from __future__ import annotations

import ast
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

LINES = 100_000
BLOCK = """
import time as _t
_header = str(await cat("big.py")).split("\\n", 1)[0]
_version = int(_header.rsplit("@", 1)[1].split()[0])
_s = _t.perf_counter()
await patch("big.py", _version, [{"start": 50_001, "end": 50_001, "text": "def patched(a, b):\\n"}])
print(_t.perf_counter() - _s)
"""


def module_text() -> str:
    chunk = (
        "def f{i}(a, b):\n    '''Doc {i}.'''\n    x = a + b * {i}\n    return [x, {{'k': x}}]\n\n"
    )
    return "".join(chunk.format(i=i) for i in range(LINES // 5))


async def first_patch(folder: Path) -> float:
    import yaml

    from vis_core.host import Host, HostOptions

    workspace = folder / "work"
    workspace.mkdir()
    (workspace / "big.py").write_text(module_text(), encoding="utf-8")
    script = folder / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": BLOCK}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    stdout: list[str] = []
    try:
        from vis_core.events import BlockFinished

        session = await host.new_session()

        def keep(event: object) -> None:
            if isinstance(event, BlockFinished):
                stdout.append(event.stdout + (event.error or ""))

        session.subscribe(keep)
        await session.submit("patch it")
    finally:
        await host.close()
    text = "".join(stdout).strip()
    try:
        return float(text.splitlines()[-1])
    except (IndexError, ValueError):
        sys.exit(f"the block did not print a time: {text!r}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        os.environ["VIS_HOME"] = str(folder / "home")
        seconds = asyncio.run(first_patch(folder))
        text = module_text()
        started = time.perf_counter()
        ast.parse(text)
        parse = time.perf_counter() - started
    print(
        f"first patch of a {LINES:,}-line .py: {seconds * 1000:.1f} ms "
        f"(one full ast.parse of it: {parse * 1000:.1f} ms; target ≤ 50 ms)"
    )


if __name__ == "__main__":
    main()
