"""Every CLI command shows control sequences and bidi controls it did not write as visible
text: a hostile session title, search snippet, MCP server stderr, extension load error, model
answer or file name cannot set the clipboard (OSC 52), clear the screen (CSI) or reverse a
file name (U+202E)."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from cli_support import script, seed_caches, vis

OSC52 = "\x1b]52;c;SGVsbG8=\x07"  # sets the clipboard
CLEAR = "\x1b[2J"  # clears the screen
C1_CSI = "\x9b2J"  # the same, as one 8-bit character
RLO = "\u202e"  # right-to-left override: "\u202eyp.evil" reads "live.py"
HOSTILE = f"deploy {OSC52} now {CLEAR}{C1_CSI} {RLO}yp.evil \u2066isolated\u2069 \u200fmark"
BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C)
FORBIDDEN = ("\x1b", "\x07", "\x9b", *map(chr, BIDI))


def assert_inert(*texts: str) -> None:
    for text in texts:
        found = [f"U+{ord(c):04X}" for c in FORBIDDEN if c in text]
        assert not found, f"{found} reached the terminal in {text!r}"


def test_vis_sessions_titles_and_search_snippets(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    answer = script(tmp_path, [{"text": "done"}])
    run = vis(
        "run",
        "--provider",
        "scripted",
        "--script",
        str(answer),
        HOSTILE,
        cwd=workspace,
        env_home=vis_home,
    )
    assert run.returncode == 0, run.stderr
    listed = vis("sessions", cwd=workspace, env_home=vis_home)
    found = vis("sessions", "deploy", cwd=workspace, env_home=vis_home)
    assert "just now     1 turn  deploy" in listed.stdout  # when, and how long, in columns
    for done in (listed, found):
        assert done.returncode == 0, done.stderr
        assert_inert(done.stdout, done.stderr)
        assert "deploy \\x1b]52;c;SGVsbG8=\\x07 now \\x1b[2J\\x9b2J <U+202E>yp.evil" in done.stdout
        assert "<U+2066>isolated<U+2069>" in done.stdout
    # the search snippet, escaped too, without the ** marks around the match (the model's)
    assert "**" not in found.stdout
    assert found.stdout.count("deploy \\x1b]52;c;SGVsbG8=\\x07 now") == 2  # title, snippet


def test_vis_mcp_list_shows_a_server_stderr_inert(workspace: Path, vis_home: Path) -> None:
    noise = f"import sys; sys.stderr.write({HOSTILE!r} + '\\n'); sys.exit(1)"
    added = vis(
        "mcp", "add", "evil", "--", sys.executable, "-c", noise, cwd=workspace, env_home=vis_home
    )
    assert added.returncode == 0, added.stderr
    listed = vis("mcp", "list", cwd=workspace, env_home=vis_home)
    assert listed.returncode == 1  # the server failed
    assert_inert(listed.stdout, listed.stderr)
    assert "stderr:" in listed.stdout and "<U+202E>yp.evil" in listed.stdout
    assert "\\x1b]52;c;SGVsbG8=\\x07" in listed.stdout


def _hostile_extension(vis_home: Path) -> None:
    folder = vis_home / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "evil.py").write_text(f"raise RuntimeError({HOSTILE!r})\n", encoding="utf-8")


def test_vis_doctor_shows_an_extension_load_error_inert(workspace: Path, vis_home: Path) -> None:
    _hostile_extension(vis_home)
    (workspace / f"{RLO}yp.evil").mkdir()  # a hostile name in the workspace path shown
    done = vis("doctor", cwd=workspace / f"{RLO}yp.evil", env_home=vis_home)
    assert_inert(done.stdout, done.stderr)
    assert "RuntimeError: deploy \\x1b]52;c;SGVsbG8=\\x07" in done.stdout + done.stderr
    assert "workspace   " in done.stdout and "<U+202E>yp.evil" in done.stdout


def test_vis_run_answer_load_errors_and_file_names_inert(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    _hostile_extension(vis_home)
    name = RLO + "txt.exe"  # reads "exe.txt"
    code = f"open({name!r}, 'w').write('x')\nprint(await ls('.'))\nprint(await cat({name!r}))"
    turn = script(tmp_path, [{"code": code}, {"text": f"The answer: {HOSTILE}"}])
    for args in ([], ["--json"]):
        done = vis(
            "run",
            *args,
            "--provider",
            "scripted",
            "--script",
            str(turn),
            "go",
            cwd=workspace,
            env_home=vis_home,
        )
        assert done.returncode == 0, done.stderr
        assert_inert(done.stdout, done.stderr)
        assert "RuntimeError: deploy \\x1b]52;c;SGVsbG8=\\x07" in done.stderr  # load error
        if args:  # the same values, as JSON escapes
            ended = json.loads(done.stdout.splitlines()[-1])
            assert ended["content"] == f"The answer: {HOSTILE}"
        else:
            assert "The answer: deploy \\x1b]52;c;SGVsbG8=\\x07 now \\x1b[2J\\x9b2J" in done.stdout
            assert "<U+202E>yp.evil" in done.stdout
            assert "Read file · \\u202etxt.exe" in done.stdout  # the file name, as in a name


def _on_a_terminal(*args: str, cwd: Path, vis_home: Path) -> str:
    """``vis ARGS`` with a pty (of its own) as stdin, stdout and stderr: what it showed."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(VIS_HOME=str(vis_home), TERM="xterm-256color")
    env.pop("VIS_MODEL", None)
    seed_caches(vis_home)
    child = subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    shown = b""
    try:
        with contextlib.suppress(OSError):  # EIO once the child closed the terminal
            while chunk := os.read(master, 65536):
                shown += chunk
        child.wait(120)
    finally:
        os.close(master)
    return shown.decode("utf-8", "replace")


def test_vis_run_on_a_terminal_colours_its_status_lines(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """On a terminal the turn's end read '\\x1b[31mfailed:\\x1b[0m model request failed: …':
    Rich's own colours went through the extension host's stand-in for stderr, then through
    the writer that escapes what Vis did not write. They are colours again; what the block
    printed stays inert."""
    turn = script(tmp_path, [{"code": f"print({HOSTILE!r})"}])  # then the script runs out
    args = ("run", "--provider", "scripted", "--script", str(turn), "go")
    shown = _on_a_terminal(*args, cwd=workspace, vis_home=vis_home)
    assert "\x1b[31mfailed:\x1b[0m model request failed: script exhausted" in shown, shown
    assert "\\x1b[31m" not in shown and "\x1b[32m✓\x1b[0m \x1b[1mpython\x1b[0m" in shown
    assert OSC52 not in shown and CLEAR not in shown and RLO not in shown
    assert "deploy \\x1b]52;c;SGVsbG8=\\x07 now" in shown


def test_cli_output_redacts_secrets_and_keys_it_did_not_write(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    saved, key = "sk-saved-0123456789", "sk-env-9876543210ab"
    (vis_home / "secrets").write_text(json.dumps({"token": saved}), encoding="utf-8")
    (vis_home / "secrets").chmod(0o600)
    folder = vis_home / "extensions"
    folder.mkdir()
    (folder / "leak.py").write_text(
        f"raise RuntimeError('leaking {saved} and {key}')\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(VIS_HOME=str(vis_home), SOME_SERVICE_TOKEN=key)
    turn = script(tmp_path, [{"text": "ok"}])
    for args in (["doctor"], ["run", "--provider", "scripted", "--script", str(turn), "hi"]):
        done = subprocess.run(
            [sys.executable, "-m", "vis_core.cli", *args],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        shown = done.stdout + done.stderr
        assert "leaking [REDACTED] and [REDACTED]" in shown, shown
        assert saved not in shown and key not in shown


TOOLS = '''
import vis_core.extension as vis


class MyErr(Exception):
    """An error of the test's own."""


def echo(text: str) -> str:
    """Give ``text`` back."""
    return text


def fail(text: str) -> str:
    """Raise MyErr(``text``)."""
    raise MyErr(text)


vis.register_extension(vis.Extension(
    name="probe", description="Echoes and fails.", alias="probe",
    symbols=[vis.Symbol(echo), vis.Symbol(fail)],
))
'''


def _run_with_tools(workspace: Path, vis_home: Path, tmp_path: Path, responses: list) -> str:
    """``vis run`` of ``responses`` with the probe extension; what it printed on stdout."""
    folder = vis_home / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "probe.py").write_text(TOOLS, encoding="utf-8")
    turn = script(tmp_path, responses)
    args = ("run", "--provider", "scripted", "--script", str(turn), "go")
    done = vis(*args, cwd=workspace, env_home=vis_home)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_vis_run_shows_emoji_codes_as_they_were_written(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """Rich turned ``:x:`` into ❌ in every line print mode drew (the code, what it printed,
    a tool's result, a file name, an error); the text now comes through as written."""
    code = (
        'print("a:x:b :smile: :+1:")\n'
        "print(await probe.echo('Widget:x:1:False'))\n"
        "open(':x:.txt', 'w').close()\n"
        "await probe.fail(':smile: failed')"
    )
    shown = _run_with_tools(workspace, vis_home, tmp_path, [{"code": code}, {"text": "Done :x:"}])
    assert not {"❌", "😄", "👍"} & set(shown), shown
    lines = shown.splitlines()
    assert '✗ python print("a:x:b :smile: :+1:")' in shown
    assert "+ :x:.txt" in shown and "MyErr: :smile: failed" in shown
    assert "  │ a:x:b :smile: :+1:" in lines and "  │ Widget:x:1:False" in lines
    assert "Done :x:" in lines


def test_vis_run_shows_a_tool_error_of_several_lines_on_its_one_line(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """An extension tool's error of two lines put its second line on a line of its own under
    the Activity's; the line now says the error's first line, as the app's row does. The
    block's line said the traceback's last line, "second line" alone: now its first."""
    code = "await probe.fail('custom failure\\nsecond line')"
    shown = _run_with_tools(workspace, vis_home, tmp_path, [{"code": code}, {"text": "Done."}])
    lines = shown.splitlines()
    assert "✗ fail · MyErr: custom failure" in lines, shown
    assert "second line" not in lines
    (block,) = [line for line in lines if line.startswith("✗ python")]
    assert block.endswith("custom failure"), shown


def test_vis_run_keeps_a_file_name_with_line_breaks_on_its_line(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """A file name holding a newline split the block's line in two (``+ nl`` and then
    ``name.txt · …``), so a model could forge a line of its own; line breaks, tabs and
    zero-width spaces in a name or an Activity's summary now show as escapes."""
    forged = "x\n✓ Run command · exit 0"
    names = ["nl\nname.txt", "cr\rtab\t.txt", "ls\u2028ps\u2029nel\x85zw\u200b.txt", forged]
    code = "".join(f"open({name!r}, 'w').close()\n" for name in names)
    code += "await todo.add('milk\\u2028✓ Run command · exit 0\\x85\\u200b')"
    shown = _run_with_tools(workspace, vis_home, tmp_path, [{"code": code}, {"text": "Done."}])
    (line,) = [line for line in shown.splitlines() if line.startswith("✓ python")]
    for escaped in ("nl\\nname.txt", "cr\\rtab\\t.txt", "ls\\u2028ps\\u2029nel\\x85zw\\u200b.txt"):
        assert f"+ {escaped}" in line, shown
    assert "+ x\\n✓ Run command · exit 0" in line
    # the summary's breaks were spaces already (the todo's text is folded); the rest shows
    assert "✓ Add todo · #1 milk ✓ Run command · exit 0 \\u200b" in shown.splitlines()
    assert not {"\r", "\t", "\u2028", "\u2029", "\x85", "\u200b"} & set(shown), shown


def test_vis_run_shows_invisible_characters_in_names_and_answers(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """A block's ``setup\\u200c.py`` (a zero-width non-joiner) and ``README\\U000e0020.md``
    (a tag character) showed as ``+ setup.py`` and ``+ README.md`` beside the real
    ``setup.py``, and a zero-width space or tag characters in the answer reached the terminal
    raw (``rm`` and a hidden `` -rf``). A name shows every such character as its escape; the
    answer shows them by name, but keeps the joiner and variation selector of 👩‍💻 and ❤️."""
    names = ["setup.py", "setup\u200c.py", "README\U000e0020.md"]
    code = "".join(f"open({name!r}, 'w').close()\n" for name in names)
    hidden = "".join(chr(0xE0000 + ord(c)) for c in " -rf")
    answer = f"Run rm{hidden} now\u200b, 👩\u200d💻 \u2764\ufe0f"
    shown = _run_with_tools(workspace, vis_home, tmp_path, [{"code": code}, {"text": answer}])
    (line,) = [line for line in shown.splitlines() if line.startswith("✓ python")]
    for escaped in ("setup.py", "setup\\u200c.py", "README\\U000e0020.md"):
        assert f"+ {escaped}" in line, shown
    assert (
        "Run rm<U+E0020><U+E002D><U+E0072><U+E0066> now<U+200B>, 👩\u200d💻 \u2764\ufe0f" in shown
    )
    assert not {"\u200b", "\u200c", "\U000e0020"} & set(shown), shown


STRAY = "Run rm\ufe0f\ufe0e\ufe01 now: \u2764\ufe0f 1\ufe0f\u20e3 \u2764\ufe0f\ufe0e\ufe01"


def test_vis_run_shows_stray_variation_selectors_and_blank_braille_in_names(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """A run of variation selectors after ``rm`` (four hidden bits each) reached the terminal
    raw, as did ``a\u2800.txt``, whose braille blank drew as a space. A selector that selects
    nothing (after an ASCII letter, after another selector) is shown by name; those of ❤️ and
    the keycap 1️⃣ stay. A name shows the braille blank as its escape."""
    code = "open('a' + chr(0x2800) + '.txt', 'w').close()\n"
    shown = _run_with_tools(workspace, vis_home, tmp_path, [{"code": code}, {"text": STRAY}])
    (line,) = [line for line in shown.splitlines() if line.startswith("✓ python")]
    assert "+ a\\u2800.txt" in line and "\u2800" not in shown, shown
    kept = "\u2764\ufe0f 1\ufe0f\u20e3 \u2764\ufe0f"
    assert f"Run rm<U+FE0F><U+FE0E><U+FE01> now: {kept}<U+FE0E><U+FE01>" in shown, shown


def test_terminal_json_escapes_stray_variation_selectors_as_the_same_value() -> None:
    """As ``vis run --json`` and ``vis export --format json`` write them."""
    from vis_core.terminal import terminal_json

    line = json.dumps({"text": STRAY}, ensure_ascii=False)
    shown = terminal_json(line)
    assert json.loads(shown) == {"text": STRAY}
    assert "Run rm\\ufe0f\\ufe0e\\ufe01 now" in shown and "\u2764\ufe0f 1\ufe0f\u20e3" in shown


def test_terminal_json_escapes_hidden_characters_as_the_same_value() -> None:
    """A tag character in JSON output is escaped as its surrogate pair: the same string."""
    from vis_core.terminal import terminal_json

    value = {"text": "rm\U000e0020\U000e002d \u200b \u202e 👩\u200d💻"}
    shown = terminal_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(shown) == value
    assert "\\udb40\\udc20" in shown and "\\u200b" in shown and "👩\u200d💻" in shown


def test_terminal_json_escapes_exactly_the_hidden_characters_and_controls() -> None:
    """Each hidden character, DEL and C1 control is escaped as ``json.dumps`` escapes it, and
    each character beside one of their runs is left as written: the pattern that finds them
    is built from ranges."""
    from vis_core.model.invisible import HIDDEN_IN_PROSE
    from vis_core.terminal import terminal_json

    unsafe = {0x7F, *range(0x80, 0xA0), *HIDDEN_IN_PROSE}
    for code in unsafe:
        assert terminal_json(json.dumps(chr(code), ensure_ascii=False)) == json.dumps(chr(code))
    beside = {c + step for c in unsafe for step in (-1, 1)} - unsafe - set(range(0xD800, 0xE000))
    for code in beside - set(range(0x20)) - {ord('"'), ord("\\")}:
        assert terminal_json(json.dumps(chr(code), ensure_ascii=False)) == f'"{chr(code)}"'


def test_every_hidden_character_is_shown_by_name_beside_the_controls():
    """terminal_text names each of the ~4,000 characters that draw as nothing (tag characters,
    bidi controls…) as ``<U+XXXX>``, shows controls as ``\\xNN`` and keeps joiners and text,
    in one text where all of them meet (the names are found apart from the controls)."""
    from vis_core.model.invisible import HIDDEN_IN_PROSE
    from vis_core.terminal import terminal_text

    hidden = sorted(HIDDEN_IN_PROSE)
    text = "é\x1b[2J\x9b\r" + "".join(chr(code) + "x" for code in hidden) + "\u200d"
    expected = "é\\x1b[2J\\x9b" + "".join(f"<U+{code:04X}>x" for code in hidden) + "\u200d"
    assert terminal_text(text) == expected
    assert terminal_text("👍\ufe0f") == "👍\ufe0f"  # an emoji's selector stays


def test_vis_run_dash_on_a_terminal_says_what_it_waits_for_and_ctrl_c_ends_it_quietly(
    workspace: Path, vis_home: Path
) -> None:
    """Typed at a terminal, `vis run -` waited for standard input without a word, and
    Ctrl+C there ended it with Python's KeyboardInterrupt traceback."""
    import fcntl
    import select
    import termios

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(VIS_HOME=str(vis_home), TERM="xterm-256color")
    seed_caches(vis_home)
    child = subprocess.Popen(
        [sys.executable, "-m", "vis_core.cli", "run", "-"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=workspace,
        env=env,
        start_new_session=True,  # the pty is its controlling terminal: Ctrl+C reaches it
        preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
    )
    os.close(slave)
    shown = b""
    try:
        while b"Ctrl+D" not in shown:  # the note, once it waits (the old code: none came)
            assert select.select([master], [], [], 30)[0], shown
            shown += os.read(master, 65536)
        os.write(master, b"\x03")  # Ctrl+C, as typed: SIGINT to the terminal's foreground
        with contextlib.suppress(OSError):  # EIO once the child closed the terminal
            while chunk := os.read(master, 65536):
                shown += chunk
        assert child.wait(120) == 130
    finally:
        os.close(master)
    said = shown.decode("utf-8", "replace")
    assert "vis run -: type the request, then Ctrl+D on a line of its own" in said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
