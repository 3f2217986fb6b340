"""The versioned schema of the Vis database and the migrations that build it."""

from __future__ import annotations

# ``PRAGMA application_id`` of every Vis database: the bytes "VISD".
APPLICATION_ID = 0x56495344

_FTS = "fts5(text, tokenize='unicode61 remove_diacritics 2')"

# Each entry upgrades the schema from version ``index`` to ``index + 1``.
# Append new migrations; never edit one that has shipped.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE groups (
            name TEXT PRIMARY KEY,
            created REAL NOT NULL
        )""",
        """CREATE TABLE sessions (
            num INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            title TEXT NOT NULL DEFAULT '',
            group_name TEXT REFERENCES groups(name) ON DELETE SET NULL,
            workspace TEXT NOT NULL,
            project_root TEXT NOT NULL,
            created REAL NOT NULL,
            modified REAL NOT NULL,
            forked_from TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX sessions_by_modified ON sessions(modified)",
        "CREATE INDEX sessions_by_workspace ON sessions(workspace, modified)",
        """CREATE TABLE events (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            data TEXT NOT NULL,
            created REAL NOT NULL
        )""",
        "CREATE INDEX events_by_session ON events(session_id, seq)",
        """CREATE TABLE turns (
            num INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            request TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'running',
            content TEXT NOT NULL DEFAULT '',
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0,
            error TEXT,
            started REAL NOT NULL,
            ended REAL
        )""",
        "CREATE INDEX turns_by_session ON turns(session_id, position)",
        """CREATE TABLE replies (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            iteration INTEGER NOT NULL,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX replies_by_turn ON replies(turn_id, seq)",
        "CREATE INDEX replies_by_session ON replies(session_id)",
        """CREATE TABLE iterations (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            tool TEXT NOT NULL,
            code TEXT NOT NULL,
            arguments TEXT NOT NULL,
            started REAL NOT NULL
        )""",
        "CREATE INDEX iterations_by_turn ON iterations(turn_id, idx)",
        "CREATE INDEX iterations_by_session ON iterations(session_id)",
        """CREATE TABLE blocks (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            iteration_id TEXT NOT NULL,
            stdout TEXT NOT NULL,
            error TEXT,
            restarted INTEGER NOT NULL,
            duration REAL NOT NULL
        )""",
        "CREATE INDEX blocks_by_iteration ON blocks(iteration_id, seq)",
        "CREATE INDEX blocks_by_session ON blocks(session_id)",
        """CREATE TABLE activities (
            id TEXT PRIMARY KEY,
            pos INTEGER NOT NULL,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT,
            tool TEXT NOT NULL,
            tag TEXT NOT NULL,
            state TEXT NOT NULL,
            record TEXT NOT NULL  -- JSON of the latest activity event; its "activity" key
        )""",
        "CREATE INDEX activities_by_session ON activities(session_id, pos)",
        "CREATE INDEX activities_by_turn ON activities(turn_id, pos)",
        """CREATE TABLE prompts (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            text TEXT NOT NULL,
            created REAL NOT NULL
        )""",
        "CREATE INDEX prompts_by_session ON prompts(session_id, id)",
        """CREATE TABLE extension_state (
            extension TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            modified REAL NOT NULL,
            PRIMARY KEY (extension, key)
        ) WITHOUT ROWID""",
        """CREATE TABLE setting_overrides (
            scope TEXT NOT NULL CHECK (scope IN ('group', 'session')),
            owner TEXT NOT NULL,
            setting TEXT NOT NULL,
            value TEXT NOT NULL,
            modified REAL NOT NULL,
            PRIMARY KEY (scope, owner, setting)
        ) WITHOUT ROWID""",
        """CREATE TABLE sandbox_snapshots (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            data TEXT NOT NULL,
            saved REAL NOT NULL
        )""",
        """CREATE TABLE attachments (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            iteration_id TEXT,
            filename TEXT NOT NULL,
            version INTEGER NOT NULL,
            media_type TEXT NOT NULL,
            kind TEXT NOT NULL,
            size INTEGER NOT NULL,
            path TEXT NOT NULL,
            audience TEXT NOT NULL CHECK (audience IN ('both', 'user', 'model')),
            commentable INTEGER NOT NULL,
            label TEXT NOT NULL,
            created REAL NOT NULL,
            UNIQUE (session_id, filename, version)
        )""",
        # Full-text search; each rowid is the row's number in sessions / turns / replies.
        f"CREATE VIRTUAL TABLE search_titles USING {_FTS}",
        f"CREATE VIRTUAL TABLE search_requests USING {_FTS}",
        f"CREATE VIRTUAL TABLE search_replies USING {_FTS}",
    ),
    # 2: an activity row points at the events row of its latest event (``seq``) instead of
    # holding a second copy of that event's JSON, so appending an activity event writes the
    # JSON once and updates no index.
    (
        """CREATE TABLE activities_v2 (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            pos INTEGER NOT NULL,  -- seq of the activity's first event: the order they started
            id TEXT NOT NULL UNIQUE,
            turn_id TEXT,
            tool TEXT NOT NULL,
            tag TEXT NOT NULL,
            state TEXT NOT NULL,
            seq INTEGER NOT NULL,  -- events row of the latest activity event; its "activity" key
            PRIMARY KEY (session_id, pos)
        ) WITHOUT ROWID""",
        """INSERT INTO activities_v2 (id, pos, session_id, turn_id, tool, tag, state, seq)
        SELECT a.id, a.pos, a.session_id, a.turn_id, a.tool, a.tag, a.state, latest.seq
        FROM activities AS a JOIN (
            SELECT json_extract(data, '$.activity.id') AS id, max(seq) AS seq FROM events
            WHERE type IN ('ActivityStarted', 'ActivityUpdated', 'ActivityEnded') GROUP BY 1
        ) AS latest ON latest.id = a.id""",
        "DROP TABLE activities",
        "ALTER TABLE activities_v2 RENAME TO activities",
        "CREATE INDEX activities_by_turn ON activities(turn_id, pos)",
    ),
    # 3: the model's thinking, searchable after titles, requests and replies. Deleting a
    # session cascades to ``thinking``, and the trigger takes the text out of the index.
    (
        """CREATE TABLE thinking (
            seq INTEGER PRIMARY KEY,  -- the AssistantThinking event
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            iteration INTEGER NOT NULL,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX thinking_by_session ON thinking(session_id)",
        f"CREATE VIRTUAL TABLE search_thinking USING {_FTS}",
        """CREATE TRIGGER thinking_unindexed AFTER DELETE ON thinking BEGIN
            DELETE FROM search_thinking WHERE rowid = old.seq;
        END""",
    ),
    # 4: one index on activities instead of two: (turn_id, id) finds the row a later event
    # of an activity updates and lists a turn's activities, so a new activity writes one
    # index page fewer. turn_id is '' for an activity outside any turn.
    (
        """CREATE TABLE activities_v4 (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            pos INTEGER NOT NULL,  -- seq of the activity's first event: the order they started
            id TEXT NOT NULL,
            turn_id TEXT NOT NULL,  -- '' outside a turn
            tool TEXT NOT NULL,
            tag TEXT NOT NULL,
            state TEXT NOT NULL,
            seq INTEGER NOT NULL,  -- events row of the latest activity event; its "activity" key
            PRIMARY KEY (session_id, pos),
            UNIQUE (turn_id, id)
        ) WITHOUT ROWID""",
        """INSERT INTO activities_v4 (session_id, pos, id, turn_id, tool, tag, state, seq)
        SELECT session_id, pos, id, coalesce(turn_id, ''), tool, tag, state, seq
        FROM activities""",
        "DROP TABLE activities",
        "ALTER TABLE activities_v4 RENAME TO activities",
    ),
    # 5: no index on the event log. A session's events are found through its runs: each
    # row of ``event_runs`` is the first seq of a run of events of one session, and a run
    # ends where the next one (of any session) starts. A run starts only when the writing
    # session changes, so appending an event writes the log and nothing else. Without an
    # index, events keep no foreign key (deleting a session deletes its runs' events).
    (
        """CREATE TABLE event_runs (
            start INTEGER PRIMARY KEY,  -- seq of the run's first event
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE
        )""",
        "CREATE INDEX event_runs_by_session ON event_runs(session_id)",
        """INSERT INTO event_runs (start, session_id)
        SELECT seq, session_id FROM (
            SELECT seq, session_id, lag(session_id) OVER (ORDER BY seq) AS previous FROM events
        ) WHERE previous IS NOT session_id""",
        """CREATE TABLE events_v5 (
            seq INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL,
            type TEXT NOT NULL,
            data TEXT NOT NULL,
            created REAL NOT NULL
        )""",
        "INSERT INTO events_v5 SELECT seq, session_id, type, data, created FROM events",
        "DROP TABLE events",
        "ALTER TABLE events_v5 RENAME TO events",
    ),
    # 6: folds (``FoldCreated`` events) with their measurement: ``pending`` until the next
    # response of the conversation measures the whole request (or says why it cannot).
    (
        """CREATE TABLE folds (
            seq INTEGER PRIMARY KEY,  -- the FoldCreated event
            id TEXT NOT NULL UNIQUE,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            key TEXT NOT NULL,
            gist TEXT NOT NULL,
            spans TEXT NOT NULL,  -- JSON [[turn position, first iteration, last iteration]]
            origin TEXT NOT NULL,
            removed_tokens INTEGER NOT NULL,
            model TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',  -- pending, measured or unavailable
            reason TEXT,
            before_input_tokens INTEGER,
            after_input_tokens INTEGER,
            fold_count INTEGER,
            created REAL NOT NULL
        )""",
        "CREATE INDEX folds_by_session ON folds(session_id, status)",
    ),
    # 7: background commands that reported how they ended (``BackgroundCommandEnded``): the
    # transcript of a stored turn shows them where they were shown live.
    (
        """CREATE TABLE background_commands (
            seq INTEGER PRIMARY KEY,  -- the BackgroundCommandEnded event
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            handle_id TEXT NOT NULL,
            command TEXT NOT NULL,
            state TEXT NOT NULL,
            runtime REAL
        )""",
        "CREATE INDEX background_commands_by_turn ON background_commands(turn_id)",
    ),
    # 8: drafts, the isolated working copies a session works in until the person approves or
    # discards them (vis_core/drafts). A row outlives its session and a killed Vis.
    (
        """CREATE TABLE drafts (
            id TEXT PRIMARY KEY,
            label TEXT NOT NULL,
            backend TEXT NOT NULL,  -- worktree or copy
            root TEXT NOT NULL,  -- the draft's working copy (the session's workspace in it)
            workspace TEXT NOT NULL,  -- the live workspace it was made from
            repo_root TEXT,  -- the live repository's top folder (worktree backend)
            base TEXT NOT NULL,  -- the commit the draft started from (copy: its manifest)
            branch TEXT,
            target_branch TEXT,
            session_id TEXT,
            created REAL NOT NULL,
            UNIQUE (workspace, label)
        )""",
        "CREATE INDEX drafts_by_session ON drafts(session_id)",
    ),
    # 9: the marks ``DraftChanged`` leaves in a turn (entering, leaving a draft): a stored turn
    # shows them where they were shown live.
    (
        """CREATE TABLE draft_marks (
            seq INTEGER PRIMARY KEY,  -- the DraftChanged event
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            text TEXT NOT NULL
        )""",
        "CREATE INDEX draft_marks_by_turn ON draft_marks(turn_id)",
    ),
    # 10: the session that started a session (``run_session``, ``consult``): a child session's
    # parent, so the session list shows children under the session that made them.
    (
        "ALTER TABLE sessions ADD COLUMN parent_id TEXT REFERENCES sessions(id) ON DELETE SET NULL",
        "CREATE INDEX sessions_by_parent ON sessions(parent_id)",
    ),
    # 11: the version numbers a session's cat, grep and patch issued per file (the newest 32):
    # a resumed session numbers on, so a patch against a version read before is checked
    # against that version, never against another content given the same number.
    (
        """CREATE TABLE file_versions (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            path TEXT NOT NULL,  -- the file's real path
            number INTEGER NOT NULL,
            digest TEXT NOT NULL,  -- SHA-256 of the text
            PRIMARY KEY (session_id, path, number)
        ) WITHOUT ROWID""",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)

# FROM clause of a session's events (``e``), the first at seq ``:first`` or later: the events
# of its runs, a run ending where the next run of any session starts.
SESSION_EVENTS = (
    "FROM event_runs AS r JOIN events AS e ON e.seq >= max(r.start, :first) AND e.seq < "
    "coalesce((SELECT min(n.start) FROM event_runs AS n WHERE n.start > r.start), "
    "9223372036854775807) WHERE r.session_id = :session AND e.session_id = :session"
)
