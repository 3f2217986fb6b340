"""Where Vis keeps its files: VIS_HOME or platformdirs, projects, and project trust."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from vis_core.codegen_cache import cache_dir

APP_NAME = "vis"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_MAX_NAME_BYTES = 255  # of one file name (NAME_MAX of Linux's file systems)
_MAX_SUFFIX_BYTES = 16  # a longer "suffix" is part of the name, cut as the rest is


def private_dir(folder: Path) -> Path:
    """``folder`` created if needed and readable by its owner only (0700)."""
    folder.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    if folder.stat().st_mode & 0o077:
        os.chmod(folder, PRIVATE_DIR_MODE)
    return folder


def write_private(path: Path, data: bytes) -> Path:
    """Write ``data`` to a new or truncated file created 0600 in a 0700 folder."""
    private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return path


@dataclass(frozen=True)
class VisPaths:
    """Every user-level place on disk; all under ``VIS_HOME`` when it is set."""

    config_dir: Path
    data_dir: Path
    log_dir: Path

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> VisPaths:
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
    def session_locks_dir(self) -> Path:
        """Where each open session's lock file is (vis_core/store/session_lock.py)."""
        return self.data_dir / "sessions"

    @property
    def temps_journal_dir(self) -> Path:
        """Where each temporary file Vis is writing is named (vis_core/system/temp_journal.py)."""
        return self.data_dir / "temps"

    @property
    def attachments_dir(self) -> Path:
        return self.data_dir / "attachments"

    def attachment_file(self, session_id: str, name: str) -> Path:
        """A new file in ``session_id``'s attachments for one named ``name``: a unique prefix,
        then the name, cut before its suffix where the whole (with ``.tmp`` while it is
        written) would pass the 255 bytes of a file name: a workspace file's own name fits
        those bytes, and with the prefix it failed as ``File name too long``."""
        import uuid  # only when an attachment is stored

        prefix = f"{uuid.uuid4().hex[:12]}-"
        suffix = Path(name).suffix
        size = len(suffix.encode("utf-8", "surrogateescape"))
        if size > _MAX_SUFFIX_BYTES:
            suffix, size = "", 0
        stem = name.removesuffix(suffix).encode("utf-8", "surrogateescape")
        room = _MAX_NAME_BYTES - len(prefix) - len(".tmp") - size
        cut = stem[:room].decode("utf-8", "ignore")  # what a cut left of a character: dropped
        return self.attachments_dir / session_id / f"{prefix}{cut}{suffix}"

    def logs_for_day(self, day: str) -> Path:
        """The log folder of one day, ``logs/YYYY-MM-DD/``."""
        return self.log_dir / day

    def ensure(self) -> VisPaths:
        for folder in (self.config_dir, self.data_dir, self.log_dir):
            private_dir(folder)
        return self


def vis_folders(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Every folder Vis keeps its own files in (VIS_HOME or the platform folders), its cache
    too: every ``vis`` process runs the code kept there."""
    paths = VisPaths.from_env(environ)
    return sorted({paths.config_dir, paths.data_dir, paths.log_dir, cache_dir(environ)})


def folders_problem(paths: VisPaths | None = None) -> str | None:
    """Why Vis cannot keep its files where it should (VIS_HOME or the platform folders)."""
    paths = paths or VisPaths.from_env()
    source = "VIS_HOME" if os.environ.get("VIS_HOME") else "the user folders"
    try:
        paths.ensure()
    except OSError as exc:
        return (
            f"Vis cannot create its folders ({source}): {exc.strerror or exc} "
            f"({exc.filename or paths.config_dir}). Set VIS_HOME to a folder you can write."
        )
    for folder in (paths.config_dir, paths.data_dir, paths.log_dir):
        if not os.access(folder, os.W_OK | os.X_OK):
            return (
                f"Vis cannot write its folder {folder} ({source}). Give yourself write access "
                "or set VIS_HOME to a folder you can write."
            )
    return None


def find_project_root(cwd: Path | str) -> Path:
    """The nearest folder at or above ``cwd`` holding ``.vis/`` or ``vis.yml``, both yours
    (see :func:`not_yours`), else ``cwd``."""
    return _project_walk(cwd)[0]


def foreign_projects(cwd: Path | str) -> list[str]:
    """The folders at or above ``cwd`` holding ``.vis/`` or ``vis.yml`` that
    :func:`find_project_root` passed over, another user owning them, each with why."""
    return _project_walk(cwd)[1]


def _project_walk(cwd: Path | str) -> tuple[Path, list[str]]:
    start = Path(cwd).resolve()
    passed: list[str] = []
    for folder in (start, *start.parents):
        markers = [m for m in (folder / ".vis", folder / "vis.yml") if _marks(m)]
        if not markers:
            continue
        foreign = not_yours(folder)
        if foreign is None and any(not_yours(marker) is None for marker in markers):
            return folder, passed
        passed.append(
            f"{folder} is {foreign}" if foreign else f"{markers[0]} is {not_yours(markers[0])}"
        )
    return start, passed


def _marks(path: Path) -> bool:
    return path.is_dir() if path.name == ".vis" else path.is_file()


def your_owners() -> frozenset[int]:
    """Who may own a folder or file Vis takes as your project's, as git's safe.directory
    check has it: you; root, who can change your files anyway; and for Vis run as root by
    ``sudo``, the user who ran it (``SUDO_UID``). Another user who can write a shared parent
    (a sticky ``/tmp``) must not choose your project, its settings or its instructions."""
    owners = {os.geteuid(), 0}
    sudo = os.environ.get("SUDO_UID", "")
    if os.geteuid() == 0 and sudo.isdigit():
        owners.add(int(sudo))
    return frozenset(owners)


def not_yours(path: Path | str, uid: int | None = None) -> str | None:
    """Why ``path`` (a link not followed), or its owner ``uid`` when given, does not count as
    yours: "owned by another user (nobody, uid 65534)"; None when it does, or is gone."""
    if uid is None:
        try:
            uid = os.lstat(path).st_uid
        except OSError:
            return None
    if uid in your_owners():
        return None
    import pwd

    try:
        name = f"{pwd.getpwuid(uid).pw_name}, "
    except KeyError:
        name = ""
    return f"owned by another user ({name}uid {uid})"


def not_yours_notice(foreign: list[str]) -> str:
    """The start's note on what :func:`foreign_projects` passed over and the instruction files
    another user owns (``foreign``: each with why)."""
    return (
        f"Vis skipped what another user owns: {'; '.join(foreign)}. It takes no such folder as "
        "the project and reads no settings or instructions from it, as git does not use "
        "another user's repository: whoever can write a shared folder (/tmp) could plant them. "
        "If they are yours, make them yours (chown)."
    )


CONTROL_NAMES = (".vis", "vis.yml")
CONTROL_PREFIX = ".env"


# Skills other agents keep, which a trusted project's sessions load too (skills/found.py).
SHARED_SKILL_FOLDERS = (".agents/skills", ".claude/skills")
# Other agents' folders a trusted project's sessions read: their skills and Claude Code's
# command files (commands/files.py), each a control folder of the trust fingerprint.
SHARED_CONTROL_FOLDERS = (*SHARED_SKILL_FOLDERS, ".claude/commands")


def control_files(project: Path) -> list[Path]:
    """The files that decide what a project runs or tells the model: ``vis.yml``, ``.env*``,
    all of ``.vis/``, the skills of ``.agents/skills`` and ``.claude/skills`` and the command
    files of ``.claude/commands``."""
    root = Path(project)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    found: list[Path] = []
    for name in names:
        path = root / name
        if name == ".vis" and path.is_dir() and not path.is_symlink():
            found += _files_in(path)
        elif name in CONTROL_NAMES or name.startswith(CONTROL_PREFIX):
            found.append(path)
    for relative in SHARED_CONTROL_FOLDERS:
        folder = root / relative
        if folder.is_dir() and not folder.is_symlink() and not folder.parent.is_symlink():
            found += _files_in(folder)
    return found


def _files_in(path: Path) -> list[Path]:
    """Every file under ``path``, and the linked folders in it (not followed), sorted."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        found += [Path(folder) / f for f in sorted(files)]
        found += [Path(folder) / d for d in dirs if (Path(folder) / d).is_symlink()]
    return found


KEEP_LIMIT = 16 << 20  # bytes of one control file Vis keeps to load
# Above this, a control file counts by its size, change time and inode, not read whole: a block
# can make a sparse ``.env.big`` of a terabyte in an instant, which Vis would read at each start.
HASH_LIMIT = 256 << 20
EXTENSIONS_FOLDER = ".vis/extensions/"
LOADED_FILES = ("vis.yml", ".vis/settings.toml", ".vis/mcp.json")


def _loaded(relative: str) -> bool:
    """Whether Vis loads the control file ``relative`` (so its bytes are kept)."""
    return (
        relative in LOADED_FILES
        or (relative.startswith(CONTROL_PREFIX) and "/" not in relative)
        or (relative.startswith(EXTENSIONS_FOLDER) and relative.endswith(".py"))
    )


@dataclass(frozen=True)
class ControlSnapshot:
    """A project's control files read once: the fingerprint hashes exactly the bytes kept
    here, and Vis loads these bytes (settings, environment, MCP servers, extension code),
    never the files again, so what was checked and what runs cannot differ.

    A link to a file of the project is followed: its target's content is hashed and kept,
    and ``links`` names it, for ``vis trust`` to say. A link leading out of the project (or
    into Vis's own folders) is hashed by its link text and not followed: a problem when Vis
    would load it. A linked folder inside ``.vis/`` (and ``.vis`` itself as a link) is hashed
    by its link text and not followed, so nothing under it loads.
    """

    root: Path
    fingerprint: str
    files: Mapping[str, bytes] = field(default_factory=dict)  # relative posix path: bytes
    problems: Mapping[str, str] = field(default_factory=dict)  # relative path: why not kept
    digests: Mapping[str, bytes] = field(default_factory=dict)  # relative path: what was hashed
    linked_folders: tuple[str, ...] = ()  # links to folders in .vis/ (not followed, not loaded)
    links: Mapping[str, str] = field(default_factory=dict)  # relative path: its target's, followed

    def read(self, relative: str) -> bytes | None:
        """The bytes of control file ``relative`` (``vis.yml``, ``.vis/mcp.json``) as
        hashed, or None when it is absent; ``OSError`` naming it when it could not be read."""
        if relative in self.problems:
            raise OSError(f"cannot read {self.root / relative}: {self.problems[relative]}")
        return self.files.get(relative)

    def names(self) -> list[str]:
        """Every control file Vis loads, as a path relative to the project (kept or not)."""
        return sorted({*self.files, *self.problems})

    def same_but(self, other: ControlSnapshot, relative: str) -> bool:
        """Whether ``other`` holds the same control files as this one, but ``relative``."""
        mine = {k: v for k, v in self.digests.items() if k != relative}
        return mine == {k: v for k, v in other.digests.items() if k != relative}


def _read_control(
    path: Path, root: Path, keep: bool, whole: bool = True
) -> tuple[bytes, bytes | None, str | None]:
    """(what the fingerprint takes for ``path``, its bytes when kept, why not kept).

    Only a regular file of the project is read, and at most :data:`HASH_LIMIT` bytes of it,
    whatever its size says: a link leading out of ``root`` or into Vis's own folders (a
    jailed block's ``.env.local -> /tmp/secret-creds``, a checkout's ``.env.x ->
    /proc/self/mem``) is taken by its link text, never opened. A file with another name (a
    hard link) is not kept: a write through that name would change it unseen by the jail;
    nor one another user owns (:func:`not_yours`)."""
    import hashlib
    import stat

    text = b""
    try:
        linked = os.path.islink(path)
        if linked:
            text = b"link:" + os.fsencode(os.readlink(path))
            outside = _outside(Path(os.path.realpath(path)), root)
            if outside is not None:
                return text, None, outside
        # a name listed as a file but swapped for a link since: ELOOP
        nofollow = 0 if linked else os.O_NOFOLLOW
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | nofollow)
    except OSError as exc:
        why = exc.strerror or str(exc)
        if os.path.islink(path):  # a broken link, or one Vis may not follow
            return b"link:" + os.fsencode(os.readlink(path)), None, why
        return f"unreadable:{exc.errno}".encode(), None, why
    try:
        info = os.fstat(fd)
        if linked:  # where the opened file lies, not what the link said a moment ago
            opened = Path(os.path.realpath(f"/proc/self/fd/{fd}"))
            if not opened.exists():  # no /proc: the name
                opened = Path(os.path.realpath(path))
            outside = _outside(opened, root)
            if outside is not None:
                return text, None, outside
        if not stat.S_ISREG(info.st_mode):
            return (text, None, None) if linked else (b"other", None, "not a regular file")
        taken = b"large:%d:%d:%d:%d" % (info.st_size, info.st_mtime_ns, info.st_dev, info.st_ino)
        if info.st_size > HASH_LIMIT:  # a sparse file costs a block nothing to make, Vis minutes
            return taken, None, f"larger than {KEEP_LIMIT >> 20} MiB" if keep else None
        digest, chunks, size = hashlib.sha256(), [], 0
        while size <= HASH_LIMIT and (chunk := os.read(fd, min(1 << 20, HASH_LIMIT + 1 - size))):
            digest.update(chunk)
            size += len(chunk)
            if keep and size <= KEEP_LIMIT:
                chunks.append(chunk)
            elif not whole:  # not hashed: no need to read what is not kept
                break
    except OSError as exc:  # a file the kernel makes as it is read, a failing disk
        return f"unreadable:{exc.errno}".encode(), None, exc.strerror or str(exc)
    finally:
        os.close(fd)
    if size > HASH_LIMIT:  # more than its size said (a file of /proc, of a FUSE mount)
        return taken, None, f"larger than {KEEP_LIMIT >> 20} MiB" if keep else None
    if keep and size > KEEP_LIMIT:
        return digest.digest(), None, f"larger than {KEEP_LIMIT >> 20} MiB"
    if keep and info.st_nlink > 1:
        return digest.digest(), None, hard_link_problem(path, info.st_nlink)
    if keep and (foreign := not_yours(path) or not_yours(path, info.st_uid)):
        return digest.digest(), None, f"it is {foreign}"  # put in a folder of yours by another
    return digest.digest(), (b"".join(chunks) if keep else None), None


def _outside(target: Path, root: Path) -> str | None:
    """Why a control file that is a link to ``target`` is not read (None: it may be)."""
    if target != root and root not in target.parents:
        return f"it is a link leading out of the project (to {target}), which Vis does not follow"
    for folder in map(os.path.realpath, vis_folders()):
        if target.is_relative_to(folder):
            return f"it is a link into Vis's own folder {folder}, which Vis does not follow"
    return None


def hard_link_problem(path: Path | str, names: int) -> str:
    """Why a control file with another name (a hard link) is not loaded, and what to do."""
    own = shlex.quote(f"{path}.own")
    return (
        f"it has another name (a hard link, {names} names in all), through which a block could "
        f"change it unseen; give it a file of its own (cp -p {shlex.quote(str(path))} {own} "
        f"&& mv {own} {shlex.quote(str(path))})"
    )


def take_snapshot(project: Path | str, *, hashed: bool = True) -> ControlSnapshot:
    """Read the project's control files once: their fingerprint and the bytes Vis loads.
    ``hashed=False`` (a project never trusted): only the files Vis loads are read, no
    fingerprint is made (``""`` matches no trust), so a checkout's large files cost nothing."""
    import hashlib  # with the Host, not with `vis`'s folder check before the app's first frame

    root = Path(project).resolve()
    digest = hashlib.sha256()
    files: dict[str, bytes] = {}
    problems: dict[str, str] = {}
    digests: dict[str, bytes] = {}
    linked: list[str] = []
    links: dict[str, str] = {}
    for path in control_files(root):
        relative = path.relative_to(root).as_posix()
        keep = _loaded(relative)
        if not keep and not hashed:
            continue
        digest.update(os.fsencode(path.relative_to(root)) + b"\0")
        taken, data, problem = _read_control(path, root, keep, hashed)
        digest.update(taken + b"\0")
        digests[relative] = taken
        if relative.startswith(".vis") and path.is_symlink() and path.is_dir():
            linked.append(relative)
        elif path.is_symlink() and problem is None and not taken.startswith(b"link:"):
            links[relative] = Path(os.path.realpath(path)).relative_to(root).as_posix()
        if data is not None:
            files[relative] = data
        elif keep and problem is not None:
            problems[relative] = problem
    fingerprint = digest.hexdigest() if hashed else ""
    return ControlSnapshot(root, fingerprint, files, problems, digests, tuple(linked), links)


def project_fingerprint(project: Path | str) -> str:
    """A hash of the project's control files (names and contents): trust is kept for it."""
    return take_snapshot(project).fingerprint


class TrustListError(RuntimeError):
    """The trust list (``trusted.json``) cannot be read; the message names it."""


def trust_target(path: Path | str) -> Path:
    """The project ``vis trust PATH`` trusts; ``ValueError`` naming ``path`` when it is not
    an existing folder."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise ValueError(f"{folder} does not exist; give the project's folder")
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; give the project's folder")
    return find_project_root(folder)


class TrustStore:
    """Projects the person trusted to run their extensions, MCP servers and settings.

    Trust is kept per path and for a fingerprint of the project's control files (``.vis/``,
    ``vis.yml``, ``.env*``): when code changes one of them, the project is no longer trusted
    until the person runs ``vis trust`` again.
    """

    def __init__(self, paths: VisPaths) -> None:
        self._file = paths.trust_file

    def _load(self) -> dict[str, str | None]:
        import json

        try:
            text = self._file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise self._error(str(exc)) from None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise self._error(f"not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise self._error("not a JSON object")
        trusted = data.get("trusted", [])
        prints = data.get("fingerprints", {})
        if not isinstance(trusted, list) or not all(isinstance(p, str) for p in trusted):
            raise self._error('"trusted" must be a list of folder paths')
        if not isinstance(prints, dict) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in prints.items()
        ):
            raise self._error('"fingerprints" must map folder paths to fingerprints')
        return {path: prints.get(path) for path in trusted}

    def _error(self, why: str) -> TrustListError:
        return TrustListError(
            f"cannot read the trust list {self._file}: {why}. Fix it, or delete it and run "
            "`vis trust PATH` again for each project you trust (Vis left it as it is)"
        )

    def trusted_paths(self) -> list[str]:
        """The folders the person trusted (``TrustListError`` when the list is unreadable)."""
        return list(self._load())

    def is_trusted(self, project: Path | str) -> bool:
        """Trusted, and the control files are as they were when the person trusted it."""
        key = str(Path(project).resolve())
        entries = self._load()
        return key in entries and entries[key] == project_fingerprint(key)

    def holds(self, snapshot: ControlSnapshot) -> bool:
        """Whether the person trusted the project with exactly the control files of
        ``snapshot`` (what Vis then loads from it)."""
        return bool(snapshot.fingerprint) and (
            self._load().get(str(snapshot.root)) == snapshot.fingerprint
        )

    def verified(self, project: Path | str) -> tuple[ControlSnapshot, bool]:
        """The project's control files read once, and whether the person trusted exactly
        these. A project never trusted is not hashed (its values are only named)."""
        root = Path(project).resolve()
        entries = self._load()
        if str(root) not in entries:
            return take_snapshot(root, hashed=False), False
        snapshot = take_snapshot(root)
        return snapshot, entries[str(root)] == snapshot.fingerprint

    def granted(self, project: Path | str) -> str | None:
        """The fingerprint of the control files the person trusted ``project`` with (None:
        never trusted)."""
        return self._load().get(str(Path(project).resolve()))

    def changed(self, snapshot: ControlSnapshot) -> bool:
        """Trusted once, but ``snapshot`` differs from what was trusted."""
        entries = self._load()
        key = str(snapshot.root)
        return key in entries and entries[key] != snapshot.fingerprint

    def trust(self, project: Path | str, snapshot: ControlSnapshot | None = None) -> Path:
        """Trust ``project`` with its control files as they are now (as ``snapshot`` read
        them, when given)."""
        resolved = Path(project).resolve()
        entries = self._load()
        if snapshot is not None and snapshot.root != resolved:
            raise ValueError(f"the snapshot of {snapshot.root} is not one of {resolved}")
        taken = snapshot if snapshot is not None else take_snapshot(resolved)
        entries[str(resolved)] = taken.fingerprint
        self._save(entries)
        return resolved

    @contextmanager
    def keeping(self, project: Path | str, relative: str) -> Iterator[None]:
        """The person's own edit of the control file ``relative`` of ``project`` (a ``vis``
        command's): a project trusted with its control files as they were just before stays
        trusted with the edit, when nothing but that file changed meanwhile."""
        before = take_snapshot(project)
        try:
            kept = self.holds(before)
        except TrustListError:
            kept = False
        yield
        if kept:
            after = take_snapshot(project)
            if before.same_but(after, relative):
                self.trust(project, after)

    def forget(self, project: Path | str) -> None:
        """Trust ``project`` no more (nothing happens when it was not trusted)."""
        resolved = str(Path(project).resolve())
        entries = self._load()
        if resolved in entries:
            del entries[resolved]
            self._save(entries)

    def _save(self, entries: dict[str, str | None]) -> None:
        import json

        self._file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._file.with_suffix(".tmp")
        data = {"trusted": sorted(entries), "fingerprints": dict(sorted(entries.items()))}
        write_private(tmp, json.dumps(data, indent=2).encode("utf-8"))
        tmp.replace(self._file)


def project_trusted(project: Path | str, paths: VisPaths | None = None) -> bool:
    """Whether the person trusts ``project`` as its control files are now (an unreadable
    trust list trusts nothing): what a project file's value waits for."""
    try:
        return TrustStore(paths or VisPaths.from_env()).is_trusted(project)
    except TrustListError:
        return False


def trust_command(project_root: Path | str) -> str:
    """``vis trust ROOT`` as a person pastes it into a shell: a folder with a space, a quote
    or ``$`` in its name stays one word."""
    return f"vis trust {shlex.quote(str(project_root))}"


def lapsed_reason(project_root: Path | None) -> str:
    """Why Vis does not load a project the person trusted once, as the clause every notice of
    it says (the start note, ``/reload``, a skipped extension or command): its control files
    (in ``project_root``, unless None: the notice names it already) changed since."""
    where = "" if project_root is None else f" in {project_root}"
    return (
        f"the project's control files (.vis/, vis.yml, .env*){where} changed since you trusted it"
    )


def lapsed_remedy(project_root: Path) -> str:
    """What to do about a lapsed trust, as the clause each notice of it says: review the
    change, then the ``vis trust`` command."""
    return f"review the change, then run `{trust_command(project_root)}`"


def control_files_changed(project_root: Path) -> str:
    """The notice when a trusted project's control files changed."""
    return (
        f"{_capital(lapsed_reason(project_root))}, so its extensions, MCP servers, environment "
        "and settings are not loaded from the next start (or /reload) on. "
        f"{_capital(lapsed_remedy(project_root))}."
    )


def trust_lapsed(project_root: Path) -> str:
    """The notice when Vis skipped a project it was trusted with (at the start, or at a
    ``/reload``) because its control files changed since the person trusted it."""
    return (
        f"{_capital(lapsed_reason(project_root))}, so Vis skipped its extensions, MCP servers, "
        f"environment and settings. {_capital(lapsed_remedy(project_root))} and Reload "
        "(/reload, or Reload in Settings), or start Vis again."
    )


def trusted_again(project_root: Path) -> str:
    """The notice when the person trusted a project again (``vis trust``) after Vis skipped
    its changed control files: they load at the next reload."""
    return (
        f"The project in {project_root} is trusted again with its control files as they are "
        "now; Reload (/reload, or Reload in Settings) to load its extensions, MCP servers, "
        "environment and settings."
    )


def lapsed_extension(project_root: Path) -> str:
    """Why a project extension did not load: the project's trust lapsed (said after the
    extension's file, which names the folder)."""
    return f"not loaded: {lapsed_reason(None)}; {lapsed_remedy(project_root)} and Reload"


def _capital(clause: str) -> str:
    """``clause`` as the start of a sentence."""
    return clause[:1].upper() + clause[1:]
