"""Where Vis keeps its files: VIS_HOME or platformdirs, projects, and project trust."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "vis"


@dataclass(frozen=True)
class VisPaths:
    """Every user-level place on disk; all under ``VIS_HOME`` when it is set."""

    config_dir: Path
    data_dir: Path
    log_dir: Path

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> VisPaths:
        env = os.environ if environ is None else environ
        home = env.get("VIS_HOME")
        if home:
            root = Path(home).expanduser().resolve()
            return cls(config_dir=root, data_dir=root, log_dir=root / "logs")
        import platformdirs

        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME)),
            log_dir=Path(platformdirs.user_log_dir(APP_NAME)),
        )

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def mcp_file(self) -> Path:
        return self.config_dir / "mcp.json"

    @property
    def extensions_dir(self) -> Path:
        return self.config_dir / "extensions"

    @property
    def secrets_file(self) -> Path:
        return self.config_dir / "secrets"

    @property
    def trust_file(self) -> Path:
        return self.data_dir / "trusted.json"

    @property
    def db_file(self) -> Path:
        return self.data_dir / "vis.db"

    @property
    def attachments_dir(self) -> Path:
        return self.data_dir / "attachments"

    def logs_for_day(self, day: str) -> Path:
        """The log folder of one day, ``logs/YYYY-MM-DD/``."""
        return self.log_dir / day

    def ensure(self) -> VisPaths:
        for folder in (self.config_dir, self.data_dir, self.log_dir):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def find_project_root(cwd: Path | str) -> Path:
    """The nearest folder at or above ``cwd`` holding ``.vis/`` or ``vis.yml``, else ``cwd``."""
    start = Path(cwd).resolve()
    for folder in (start, *start.parents):
        if (folder / ".vis").is_dir() or (folder / "vis.yml").is_file():
            return folder
    return start


class TrustStore:
    """Projects the person trusted to run their extensions and MCP servers, kept per path."""

    def __init__(self, paths: VisPaths) -> None:
        self._file = paths.trust_file

    def _read(self) -> list[str]:
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise RuntimeError(f"cannot read the trust list {self._file}: {exc}") from exc
        return [str(p) for p in data.get("trusted", [])]

    def is_trusted(self, project: Path | str) -> bool:
        return str(Path(project).resolve()) in self._read()

    def trust(self, project: Path | str) -> Path:
        resolved = Path(project).resolve()
        entries = self._read()
        if str(resolved) not in entries:
            entries.append(str(resolved))
            self._file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self._file.with_suffix(".tmp")
            tmp.write_text(json.dumps({"trusted": sorted(entries)}, indent=2), encoding="utf-8")
            tmp.replace(self._file)
        return resolved
