"""Child process for the store tests: appends events and prints each committed seq."""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid

from vis_core.events import ActivityEnded, ActivityStarted, TurnStarted
from vis_core.model.activity import (
    ActivityPresentation,
    ActivityRecord,
    ActivityState,
    ActivityText,
    SymbolTag,
)
from vis_core.store import Store


def _meet(folder: str) -> None:
    """Barrier: mark arrival, then wait until another writer has arrived too."""
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, str(os.getpid())), "w").close()
    while len(os.listdir(folder)) < 2:
        time.sleep(0.002)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--session", default=None, help="append to this session (else create one)")
    parser.add_argument("--count", type=int, default=0, help="activity pairs; 0 = until killed")
    parser.add_argument("--go", default=None, help="wait for this file before appending")
    parser.add_argument(
        "--meet", default=None, help="halfway, wait in this folder until a second writer arrives"
    )
    args = parser.parse_args()
    store = Store(args.db)
    session_id = args.session or store.create_session("/w", "/w", title="child").id
    print(f"session {session_id}", flush=True)
    while args.go and not os.path.exists(args.go):
        time.sleep(0.002)
    turn_id = uuid.uuid4().hex
    seq = store.append(TurnStarted(session_id, turn_id=turn_id, position=0, request="go"))
    print(seq, flush=True)
    n = 0
    while args.count == 0 or n < args.count:
        record = ActivityRecord(
            id=uuid.uuid4().hex,
            session_id=session_id,
            turn_id=turn_id,
            iteration_id=None,
            tool="shell",
            tag=SymbolTag.EXTERNAL,
            state=ActivityState.RUNNING,
            presentation=ActivityPresentation(
                "Run", f"step {n}", content=(ActivityText("x" * 2000),)
            ),
        )
        print(store.append(ActivityStarted(session_id, activity=record)), flush=True)
        ended = ActivityRecord(**{**record.__dict__, "state": ActivityState.SUCCEEDED})
        print(store.append(ActivityEnded(session_id, activity=ended)), flush=True)
        n += 1
        if args.meet and n == args.count // 2:
            _meet(args.meet)
    store.close()
    print("done", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
