"""Whether bubblewrap can confine a process here: found once, kept for the process."""

from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from vis_core.system.programs import host_program

INSTALL_HINT = (
    "bubblewrap (`bwrap`) is not installed or not on PATH, so Vis cannot confine this process "
    "and will not run it unconfined. Install it with `apt-get install bubblewrap` "
    "(Debian/Ubuntu), `dnf install bubblewrap` (Fedora/RHEL) or your distribution's "
    "bubblewrap package, or turn the jail off."
)
# What the jail shows of the system, read-only: programs, libraries and their configuration.
# Nothing else of `/` (no /run, /var, /srv, /mnt, /home): a unix socket there (systemd,
# docker, gpg-agent) could run commands outside the jail.
SYSTEM_DIRS = (
    "usr",
    "bin",
    "sbin",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "etc",
    "opt",
    "nix/store",  # not /nix/var: the nix daemon's socket
)
# Secrets under /etc that root (the owner, even without capabilities) could read: hidden.
HIDDEN_SYSTEM_FILES = ("etc/shadow", "etc/shadow-", "etc/gshadow", "etc/gshadow-")
HIDDEN_SYSTEM_DIRS = (
    "etc/ssl/private",
    "etc/pki/tls/private",
    "etc/letsencrypt",
    "etc/wireguard",
    "etc/NetworkManager/system-connections",
    "etc/ipsec.d/private",
    "etc/sudoers.d",
)
# What shadow-utils (useradd, passwd, chpasswd) makes beside its databases while it edits them
# and removes within milliseconds: a lock file holding its pid and the copy it renames into
# place. Never masked: a mask on a path gone before bubblewrap mounts it stops the jail, and
# one made while a jail runs appears in its /etc unmasked all the same.
SHADOW_UTILS_TRANSIENT = re.compile(r"(passwd|group|shadow|gshadow|subuid|subgid)(\.lock|\.\d+|\+)")
# Namespaces of their own (user, PID, network, IPC, UTS), no capability even as root, a
# session of its own (no TIOCSTI into the person's terminal), and death with the parent.
ISOLATION = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
    "--new-session",
    "--die-with-parent",
)
PROBE_TIMEOUT = 20.0


class JailUnavailable(RuntimeError):
    """The jail was asked for but bubblewrap is missing or cannot run here."""


def find_bwrap() -> str:
    """The path of ``bwrap``, or :class:`JailUnavailable` with install instructions."""
    # outside the working folder: a PATH naming it (`bin`, an empty entry) never runs a
    # checkout's bin/bwrap in the jail's place
    found = host_program("bwrap", (Path.cwd(),))
    if not found:
        raise JailUnavailable(INSTALL_HINT)
    return found


def system_binds() -> list[str]:
    """bwrap arguments that show the system folders of :data:`SYSTEM_DIRS` read-only (a
    top-level link such as ``/bin -> usr/bin`` is made again as a link)."""
    args: list[str] = []
    for name in SYSTEM_DIRS:
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    hidden = ["/" + name for name in HIDDEN_SYSTEM_FILES]
    try:
        hidden += [
            f"/etc/ssh/{name}"
            for name in sorted(os.listdir("/etc/ssh"))
            if name.startswith("ssh_host_") and name.endswith("_key")
        ]
    except OSError:
        pass  # no ssh server keys here
    for path in hidden:
        if os.path.isfile(path) and not os.path.islink(path):
            args += ["--ro-bind", "/dev/null", path]
    dirs = ["/" + name for name in HIDDEN_SYSTEM_DIRS]
    # what only its owner or group may read, as found once per process: one gone since (a lock
    # file useradd or apt held) is left out, or bubblewrap could not start the jail at all
    for path in private_system_entries():
        if os.path.isdir(path):
            dirs.append(path)
        elif path not in hidden and os.path.lexists(path):
            args += ["--ro-bind", "/dev/null", path]
    for path in sorted(set(dirs)):
        if os.path.isdir(path) and not os.path.islink(path):
            args += ["--tmpfs", path, "--remount-ro", path]
    return args


def private_system_entries(top: str = "/etc") -> tuple[str, ...]:
    """The files and folders under ``top`` that others may not read (``/etc/kubernetes/
    admin.conf``, ``/etc/krb5.keytab``, a VPN's keys…), not below one another: hidden in the
    jail. Vis run as root (containers, CI) could read them all, capabilities or not, as their
    owner. Looked up by a walk (a few milliseconds), made again when a folder it read has
    changed since (an entry made or removed there: one made after the first jail is hidden
    too), else answered from the last walk (a stat of each folder)."""
    last = _WALKS.get(top)
    if last is not None and all(_changed_at(folder) == at for folder, at in last[1].items()):
        return last[0]
    found: list[str] = []
    folders: dict[str, int | None] = {}  # each folder read, with its change time before
    pending = [top]
    while pending:
        folder = pending.pop()
        folders[folder] = _changed_at(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:  # a link (most of /etc: certificates, alternatives) is told by its type alone
                if entry.is_symlink():
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if not mode & stat.S_IROTH:
                if not (folder == top and SHADOW_UTILS_TRANSIENT.fullmatch(entry.name)):
                    found.append(entry.path)
            elif stat.S_ISDIR(mode):
                pending.append(entry.path)
    _WALKS[top] = (tuple(sorted(found)), folders)
    return _WALKS[top][0]


# the last walk of each top folder: what it found, and the folders it read
_WALKS: dict[str, tuple[tuple[str, ...], dict[str, int | None]]] = {}


def _changed_at(folder: str) -> int | None:
    """When ``folder``'s entries last changed (its ctime, in ns); None when it is gone."""
    try:
        return os.stat(folder).st_ctime_ns
    except OSError:
        return None


# No user namespace inside the jail (bubblewrap 0.8+): no nested namespace to try mounts in.
NO_MORE_USERNS = ("--disable-userns",)
_SUPPORTED: list[str] = []  # what of NO_MORE_USERNS this bubblewrap took in the check
_CHECKING = threading.Lock()
_ANSWER: list[str | None] = []  # the check's answer, once taken
_STARTED: list[Callable[[], str | None]] = []  # the check started, its answer not yet taken


def isolation() -> tuple[str, ...]:
    """The namespace and capability options of every jail (:data:`ISOLATION`, and
    ``--disable-userns`` where this bubblewrap has it)."""
    jail_problem()
    return (*ISOLATION, *_SUPPORTED)


def jail_problem() -> str | None:
    """Why the jail cannot run here, or None when it can: a jailed ``true`` run once per
    process (bubblewrap missing, or the kernel refusing its namespaces); a second caller
    waits for the first one's answer."""
    with _CHECKING:
        if not _ANSWER:
            _ANSWER.append((_STARTED.pop() if _STARTED else _start())())
        return _ANSWER[0]


def check_in_background() -> None:
    """Start the check now, once per process: bubblewrap runs its jailed ``true`` (~5-25 ms)
    beside the work that follows, and :func:`jail_problem` takes its answer. No thread waits
    for it: one that walked /etc for the jail's masks beside the start's imports handed the
    GIL back and forth with them at every file either read."""
    with _CHECKING:
        if not _ANSWER and not _STARTED:
            _STARTED.append(_start())


def _start() -> Callable[[], str | None]:
    """Start the jailed ``true``; what it returns waits for it and gives the answer."""
    try:
        bwrap = find_bwrap()
    except JailUnavailable as exc:
        return functools.partial(str, exc)
    tail = [*system_binds(), "--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        first = _probe([bwrap, *ISOLATION, *NO_MORE_USERNS, *tail])
    except OSError as exc:
        return functools.partial(_unrun, bwrap, exc)
    return functools.partial(_answer, bwrap, tail, first)


def _answer(bwrap: str, tail: list[str], first: subprocess.Popen[bytes]) -> str | None:
    try:
        code, err = _waited(first)
        if code == 0:
            _SUPPORTED.extend(NO_MORE_USERNS)
        else:  # a bubblewrap before 0.8 has no --disable-userns
            code, err = _waited(_probe([bwrap, *ISOLATION, *tail]))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _unrun(bwrap, exc)
    if code != 0:
        said = err.decode("utf-8", "replace").strip() or f"exit {code}"
        return (
            f"bubblewrap ({bwrap}) cannot create its namespaces here ({said}). Allow "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on "
            "Ubuntu 24.04+ an AppArmor profile for bwrap), or in a container run it with "
            "--privileged or a seccomp profile that allows them"
        )
    return None


def _unrun(bwrap: str, exc: Exception) -> str:
    return f"bubblewrap ({bwrap}) could not be run: {exc}"


def _probe(argv: list[str]) -> subprocess.Popen[bytes]:
    """``argv`` started from the thread that lasts as long as this process: bubblewrap's
    ``--die-with-parent`` would kill it once the thread that started it ends."""
    # here: the many modules that import this one for its constants need not load it
    from vis_core.system.child_process import on_lasting_thread

    return on_lasting_thread(
        lambda: subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
    )


def _waited(probe: subprocess.Popen[bytes]) -> tuple[int, bytes]:
    """``probe``'s exit status and error output; killed after :data:`PROBE_TIMEOUT` s."""
    try:
        _, err = probe.communicate(timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        probe.kill()
        probe.communicate()
        raise
    return probe.returncode, err


def jail_works() -> bool:
    """Whether the jail can run here (the default of the ``jail`` setting)."""
    return jail_problem() is None
