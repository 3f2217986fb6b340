"""The SDK inside ``python_execution``: declarations work; registration and host calls refuse."""

from __future__ import annotations

from vis_core.sandbox import Sandbox

CODE = """
import vis_core.extension as vis

declared = vis.Extension(name="probe", description="Built in the sandbox.")
print("declared", declared.name)

def attempt(label, call):
    try:
        call()
    except Exception as exc:
        print(label, type(exc).__name__, "trusted extension code" in str(exc))
    else:
        print(label, "allowed")

attempt("register", lambda: vis.register_extension(declared))
attempt("state", lambda: vis.state.get("key"))
attempt("state-set", lambda: vis.state.update({"key": 1}))
attempt("shell", lambda: vis.shell("echo hi"))
attempt("jailed", lambda: vis.jailed_shell("echo hi"))
attempt("fs-read", lambda: vis.fs.read_text("notes.txt"))
attempt("fs-write", lambda: vis.fs.write("notes.txt", "x"))
attempt("sessions", lambda: vis.list_sessions())
attempt("create", lambda: vis.sessions.create())
attempt("tools", lambda: vis.tools.cat("notes.txt"))
attempt("ask", lambda: vis.ask("Name?", vis.plaintext("name")))
attempt("live", lambda: vis.live("Work", vis.status("s", "x")))
"""


async def test_sdk_in_the_sandbox_refuses_trusted_calls(sandbox: Sandbox, workspace) -> None:
    (workspace / "notes.txt").write_text("kept", encoding="utf-8")
    result = await sandbox.run(CODE)
    assert result.error is None, result.error
    assert result.stdout.splitlines() == [
        "declared probe",
        "register RuntimeError True",
        "state RuntimeError True",
        "state-set RuntimeError True",
        "shell RuntimeError True",
        "jailed RuntimeError True",
        "fs-read PermissionError True",
        "fs-write PermissionError True",
        "sessions RuntimeError True",
        "create RuntimeError True",
        "tools RuntimeError True",
        "ask RuntimeError True",  # a form is the person's: the model has its own way to ask
        "live RuntimeError True",  # shown nowhere: "open" would say it is
    ]
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "kept"
