"""Time to first paint of the Settings screen with 50 extensions × 10 settings (target ≤ 300 ms)."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

EXTENSIONS, SETTINGS = 50, 10


def _entry(index: int) -> str:
    rows = []
    for n in range(SETTINGS):
        parent = f', parent="b{index}_s{n - 1}"' if n % 3 else ""
        kind = n % 3
        if kind == 0:
            rows.append(
                f'vis.Setting(id="b{index}_s{n}", label="Flag {n}", default=False, '
                f'description="Boolean number {n}"{parent})'
            )
        elif kind == 1:
            rows.append(
                f'vis.Setting(id="b{index}_s{n}", label="Mode {n}", type="enum", '
                f'default="a", choices=["a", "b"]{parent})'
            )
        else:
            rows.append(
                f'vis.Setting(id="b{index}_s{n}", label="Text {n}", type="string", '
                f'default="x"{parent})'
            )
    return (
        "import vis_core.extension as vis\n"
        f"vis.register_extension(vis.Extension(name='bench{index}', description='Bench.', "
        f"settings=[{', '.join(rows)}]))\n"
    )


async def _measure(workspace: Path) -> tuple[float, float, int, float]:
    from textual.app import App

    from vis_core.host import Host, HostOptions
    from vis_tui.screens.settings import SettingsScreen
    from vis_tui.widgets.settings_rows import SettingRow

    host = await Host.open(HostOptions(workspace=workspace))
    session = await host.new_session()
    painted = asyncio.Event()

    class Bench(App[None]):
        def on_mount(self) -> None:
            self.started = time.perf_counter()
            screen = SettingsScreen(host.settings, session_id=session.id, reload=host.reload)
            self.push_screen(screen)
            self.call_after_refresh(painted.set)

    app = Bench()
    async with app.run_test(size=(120, 50)) as pilot:
        await painted.wait()
        await pilot.pause()
        await app.screen.loaded.wait()  # type: ignore[attr-defined]
        first_paint = app.screen.first_paint_at - app.started  # type: ignore[attr-defined]
        await pilot.pause()
        every_row = time.perf_counter() - app.started
        rows = len(app.screen.query(SettingRow))
        start = time.perf_counter()
        await pilot.press("slash", *"mode")
        await pilot.pause()
        search = time.perf_counter() - start
    await host.close()
    return first_paint, search, rows, every_row


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["VIS_HOME"] = str(root / "home")
        folder = root / "home" / "extensions"
        folder.mkdir(parents=True)
        for index in range(EXTENSIONS):
            (folder / f"bench{index}.py").write_text(_entry(index), encoding="utf-8")
        (root / "ws").mkdir()
        runs = [asyncio.run(_measure(root / "ws")) for _ in range(3)]
    best = min(runs)
    print(f"settings screen: {EXTENSIONS} extensions x {SETTINGS} settings, {best[2]} rows")
    print(f"  first paint     {best[0] * 1000:7.1f} ms   (target <= 300 ms)")
    print(f"  every row       {best[3] * 1000:7.1f} ms   (rest mounted after the first paint)")
    print(f"  search 'mode'   {best[1] * 1000:7.1f} ms   (4 keys)")


if __name__ == "__main__":
    main()
