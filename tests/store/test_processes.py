"""Real processes: two writers on one database, and a writer killed with SIGKILL mid-write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from vis_core.store import Store

from .conftest import session_activities

CHILD = Path(__file__).with_name("writer_child.py")
ROOT = Path(__file__).resolve().parents[2]


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(CHILD), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _finish(children: list[subprocess.Popen[str]]) -> list[tuple[str, str]]:
    """Each child's output once all ended; a child still running after a minute (its partner
    died before their barrier) fails the test with every child's errors, none left running."""
    try:
        return [child.communicate(timeout=60) for child in children]
    except subprocess.TimeoutExpired:
        for child in children:
            child.kill()
        errors = [child.communicate()[1][-2000:] for child in children]
        raise AssertionError(f"a writer did not end; their errors: {errors}") from None


def _session_of(line: str) -> str:
    assert line.startswith("session "), line
    return line.split()[1]


def test_two_processes_write_one_database_at_once(tmp_path: Path) -> None:
    db = tmp_path / "vis.db"  # both children race to create and migrate it
    go = tmp_path / "go"
    meet = tmp_path / "meet"  # halfway barrier: each child's second half follows the other's first
    args = ("--count", "400", "--go", str(go), "--meet", str(meet))
    children = [_spawn(str(db), *args) for _ in range(2)]
    firsts = [child.stdout.readline() for child in children if child.stdout is not None]
    go.touch()  # both opened the database and created a session: now append at once
    results = _finish(children)
    results = [(first + out, err) for first, (out, err) in zip(firsts, results, strict=True)]
    for child, (out, err) in zip(children, results, strict=True):
        assert child.returncode == 0, err
        assert out.splitlines()[-1] == "done"
    runs: list[list[int]] = []
    with Store(db) as store:
        for out, _ in results:
            lines = out.splitlines()
            session_id = _session_of(lines[0])
            seqs = [int(line) for line in lines[1:-1]]
            assert len(seqs) == 801
            assert [e.seq for e in store.events(session_id)] == seqs
            (turn,) = store.turns(session_id)
            assert len(store.activities(turn.id)) == 400
            runs.append(seqs)
        # the writes really interleaved: each child committed while the other was writing
        assert runs[0][0] < runs[1][-1] and runs[1][0] < runs[0][-1]
        shared = store.create_session("/w", "/w").id
    # now both append to one session that already exists
    children = [_spawn(str(db), "--session", shared, "--count", "100") for _ in range(2)]
    for child, (_, err) in zip(children, _finish(children), strict=True):
        assert child.returncode == 0, err
    with Store(db) as store:
        assert len(store.events(shared)) == 2 * 201
        assert len(session_activities(store, shared)) == 200


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_write_keeps_every_committed_event(db_path: Path) -> None:
    child = _spawn(str(db_path))
    assert child.stdout is not None
    session_id = _session_of(child.stdout.readline())
    printed: list[int] = []
    while len(printed) < 400:
        line = child.stdout.readline()
        assert line, child.stderr.read() if child.stderr else "child ended"
        printed.append(int(line))
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()  # the lines already buffered here, then EOF
    child.wait(timeout=30)
    printed += [int(line) for line in rest.splitlines() if line.strip().isdigit()]
    assert child.returncode == -signal.SIGKILL

    with Store(db_path) as store:
        logged = [e.seq for e in store.events(session_id)]
        assert set(printed) <= set(logged)
        assert logged[: len(printed)] == printed
        # the projections committed with each event: one activity per ActivityStarted
        started = sum(1 for e in store.events(session_id) if e.type == "ActivityStarted")
        assert len(session_activities(store, session_id)) == started
        assert store.append(store.events(session_id)[-1].event) > logged[-1]
