"""Figure: the CPU (user+sys) of one `vis acp` session as an editor drives it, the server and
every process it starts: `initialize`, `session/new`, one text-only prompt on the scripted
provider, close. Each round is a fresh server in a home whose caches are warm (as the tests'
`seed_caches` gives them). Printed: each round and the median.
Run: ``.venv/bin/python bench/acp_session.py [ROUNDS]``.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from precompile import compile_vis


class Client:
    """An editor that accepts what it is sent."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def one_session(workspace: Path, env: dict[str, str], script: Path) -> None:
    args = ["-m", "vis_core.cli", "acp", "--provider", "scripted", "--script", str(script)]
    async with spawn_agent_process(
        cast(Any, Client()),
        sys.executable,
        *args,
        env=env,
        cwd=workspace,
        transport_kwargs={"shutdown_timeout": 30.0},
    ) as (conn, process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        ended = await conn.prompt(session_id=new.session_id, prompt=[text_block("hi")])
        assert ended.stop_reason == "end_turn", ended
    assert process.returncode == 0, f"vis acp ended with {process.returncode}"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    compile_vis()  # as an installed Vis has it (bench/precompile.py)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        workspace = folder / "work"
        workspace.mkdir()
        script = folder / "script.json"
        script.write_text('[{"text": "Hello from the script."}]', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["VIS_HOME"] = str(folder / "home")
        env.pop("VIS_MODEL", None)
        asyncio.run(one_session(workspace, env, script))  # warm-up: caches and database made
        costs = []
        for _ in range(rounds):
            before = children_cpu()
            asyncio.run(one_session(workspace, env, script))
            costs.append(children_cpu() - before)
        print("rounds (CPU s):", " ".join(f"{c:.2f}" for c in costs))
        print(
            f"one ACP session, server and its children: median {statistics.median(costs):.2f} s CPU"
        )


if __name__ == "__main__":
    main()
