"""The sandbox child process: a persistent namespace that runs blocks and proxies tool calls."""

from __future__ import annotations

import ast
import asyncio
import builtins
import importlib.util
import inspect
import os
import signal
import socket
import sys
import traceback
import types
import warnings
from typing import Any
from weakref import WeakSet

import msgspec

from vis_core.extension.tools_proxy import with_attributes
from vis_core.ipc import values as wire
from vis_core.ipc.framing import READ_CHUNK, FrameReader, ProtocolError, write_all
from vis_core.ipc.messages import (
    CancelCall,
    DirectTools,
    Done,
    HandleCall,
    Init,
    Ready,
    Restore,
    Result,
    Run,
    ToolCall,
    Tools,
    direct_to_child,
    framed,
    to_child,
)
from vis_core.ipc.pairing import ControlReader
from vis_core.sandbox.confine import confine
from vis_core.sandbox.defs import SessionDoc, make_defs
from vis_core.sandbox.output import keep_tail
from vis_core.sandbox.protocol import (
    MAX_CALLS_IN_FLIGHT,
    MAX_ERROR_CHARS,
    MAX_MESSAGE_BYTES,
    FormStatus,
    end_marker,
)
from vis_core.sandbox.proxies import (
    HandleProxy,
    ToolNamespace,
    ToolProxy,
    build_proxies,
    rebuild_exception,
)
from vis_core.sandbox.sdk_runtime import enter_sandbox
from vis_core.sandbox.state import SessionState, register_source, top_level_defs
from vis_core.sandbox.unawaited import left_unawaited, show_warning
from vis_core.system.child_process import collector_on, exit_with_parent, take_protocol_fds
from vis_core.system.network_bridge import start_from_environment

_INTERNAL = (  # where frames a block's traceback leaves out start: the sandbox, ipc, asyncio
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
    os.path.dirname(os.path.abspath(wire.__file__)) + os.sep,
    os.path.dirname(os.path.abspath(asyncio.__file__)) + os.sep,
)


def _internal(filename: str) -> bool:
    return filename.startswith(_INTERNAL)


def _filter(te: traceback.TracebackException, seen: set[int]) -> None:
    if id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if not _internal(f.filename)])
    for linked in (te.__cause__, te.__context__):
        if linked is not None:
            _filter(linked, seen)


def format_error(exc: BaseException) -> str:
    """The traceback of an exception from a block, without the sandbox's own frames."""
    te = traceback.TracebackException.from_exception(exc)
    _filter(te, set())
    return "".join(te.format())


def _failed_line(exc: BaseException | None, filename: str) -> int | None:
    """The line of the block's top-level code where ``exc`` passed through, if it did."""
    tb = None if exc is None else exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename and code.co_name == "<module>":
            return tb.tb_lineno
        tb = tb.tb_next
    return None


def block_forms(
    tree: ast.Module, code: str, exc: BaseException | None, filename: str
) -> list[dict[str, Any]]:
    """The block's top-level statements in order: ``source``, ``line``/``end_line`` and
    ``status`` (a :class:`FormStatus`)."""
    failed = _failed_line(exc, filename)
    lines = code.splitlines()
    forms: list[dict[str, Any]] = []
    status = FormStatus.UNKNOWN if exc is not None and failed is None else FormStatus.OK
    for index, node in enumerate(tree.body):
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        end = node.end_lineno or node.lineno
        if failed is not None and status is FormStatus.OK and start <= failed <= end:
            status = FormStatus.ERROR
        forms.append(
            {
                "index": index,
                "line": start,
                "end_line": end,
                "source": "\n".join(lines[start - 1 : end]),
                "status": status,
            }
        )
        if status is FormStatus.ERROR:
            status = FormStatus.NOT_RUN
    return forms


class DirectRoute:
    """A direct channel to one extension worker (:mod:`vis_core.ipc.pairing`): the calls of
    its tools go there, and their answers come back from it. When it ends, the calls that
    were not answered are made through the host (which knows those the worker took)."""

    def __init__(self, child: Child, fd: int, key: int) -> None:
        self.child = child
        self.key = key
        self.socket = socket.socket(fileno=fd)  # blocking: a write waits as on the host pipe
        self.frames = FrameReader(1 << 62)  # the worker is trusted
        self.open = True
        child.loop.add_reader(fd, self.on_readable)

    def send(self, rid: int, line: bytes) -> bool:
        """Send call ``rid`` (its frame ``line``); False when the channel ended."""
        try:
            self.socket.sendall(line)
        except OSError:
            self.close()
            return False
        self.child.direct_pending[rid] = (self, line)
        return True

    def cancel(self, rid: int) -> None:
        try:
            self.socket.sendall(framed(CancelCall(rid)))
        except OSError:
            self.close()

    def on_readable(self) -> None:
        try:
            chunk = self.socket.recv(READ_CHUNK, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.close()
            return
        child = self.child
        self.frames.feed(chunk)
        try:
            while (body := self.frames.next()) is not None:
                msg = direct_to_child(body)
                sent = child.direct_pending.pop(msg.id, None)
                if type(msg) is Result:
                    child.on_result(msg, tagged=wire.TAGGED in body)
                elif sent is not None and msg.id in child.pending:  # refused: the host's
                    child.write(sent[1])
        except (ProtocolError, msgspec.MsgspecError):  # from no worker of this Vis: left
            self.close()

    def close(self) -> None:
        if not self.open:
            return
        self.open = False
        child = self.child
        child.loop.remove_reader(self.socket.fileno())
        self.socket.close()
        if child.routes.get(self.key) is self:
            del child.routes[self.key]
        for name in [n for n, route in child.direct.items() if route is self]:
            del child.direct[name]
        for rid, (route, line) in list(child.direct_pending.items()):
            if route is self:
                del child.direct_pending[rid]
                if rid in child.pending:  # the host answers it (it ran, or it runs now)
                    child.write(line)


class Child:
    """The child's protocol loop and namespace."""

    def __init__(self, fd_in: int, fd_out: int, out: Any) -> None:
        self.fd_in = fd_in
        self.fd_out = fd_out
        self.out = out
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        module = types.ModuleType("__main__")
        module.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = module
        self.ns: dict[str, Any] = module.__dict__
        self.state = SessionState(self.ns)
        self.told_unawaited: WeakSet[Any] = WeakSet()  # unawaited calls a block was told of
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.max_calls = MAX_CALLS_IN_FLIGHT  # both as the host says in ``init``
        self.message_limit = MAX_MESSAGE_BYTES
        self.frames = FrameReader(1 << 62)  # the host is trusted
        self.nonce = ""
        self.block_task: asyncio.Task[None] | None = None
        self.in_user_code = False
        self.interrupted = False
        self.tool_roots: dict[str, Any] = {}
        # direct channels to extension workers: by worker, by tool, and the calls sent there
        self.control: ControlReader | None = None
        self.routes: dict[int, DirectRoute] = {}
        self.direct: dict[str, DirectRoute] = {}
        self.direct_pending: dict[int, tuple[DirectRoute, bytes]] = {}

    # -- protocol ----------------------------------------------------------------------------
    def send(self, message: Ready | CancelCall | Done) -> None:
        self.write(framed(message))

    def write(self, data: bytes) -> None:
        write_all(self.fd_out, data)  # a long message may be cut short by a signal

    def on_readable(self) -> None:
        chunk = os.read(self.fd_in, READ_CHUNK)
        if not chunk:
            os._exit(0)  # the host went away
        self.frames.feed(chunk)
        while (body := self.frames.next()) is not None:
            msg = to_child(body)
            if type(msg) is Result:
                self.on_result(msg, tagged=wire.TAGGED in body)
            elif type(msg) is Run:
                if msg.tools is not None:
                    self.set_tools(msg.tools)
                for name, value in wire.decode(msg.globals or {}).items():
                    self.state.inject(name, value)
                self.block_task = self.loop.create_task(self.run_block(msg.id, msg.code))
            elif type(msg) is Tools:
                self.set_tools(msg.tools)
            elif type(msg) is Init:
                self.on_init(msg)

    def on_control(self) -> None:
        """The host paired this child with a worker, or changed what it answers directly."""
        control = self.control
        assert control is not None
        notes = control.receive()
        if notes is None:  # the host is gone
            self.loop.remove_reader(control.fileno())
            control.close()
            self.control = None
            return
        for note, fd in notes:
            try:
                tools = _direct_tools.decode(note)
            except msgspec.MsgspecError:  # from no host of this Vis
                if fd is not None:
                    os.close(fd)
                continue
            if fd is not None:
                old = self.routes.pop(tools.key, None)
                if old is not None:
                    old.close()
                self.routes[tools.key] = DirectRoute(self, fd, tools.key)
            route = self.routes.get(tools.key)
            for name in [n for n, r in self.direct.items() if r.key == tools.key]:
                del self.direct[name]
            if route is not None:
                self.direct.update(dict.fromkeys(tools.tools, route))

    def on_init(self, msg: Init) -> None:
        self.nonce = msg.nonce
        if msg.control >= 0:
            self.control = ControlReader(msg.control)
            self.loop.add_reader(msg.control, self.on_control)
        self.max_calls = msg.max_calls or MAX_CALLS_IN_FLIGHT
        self.message_limit = msg.message_limit or MAX_MESSAGE_BYTES
        for name, value in wire.decode(msg.globals).items():
            self.state.inject(name, value)
        self.state.inject("defs", make_defs(self.state))
        self.set_tools(msg.tools)
        if msg.confined:  # under the jail: no direct spawn, no ctypes, no Vis internals
            confine()
        report = self.state.restore(msg.snapshot)
        self.state.snapshot()  # remember the restored state as the last one
        self.send(Ready(os.getpid(), Restore(**report)))

    def set_tools(self, entries: list[dict[str, Any]]) -> None:
        roots = build_proxies(entries, self.request)
        if isinstance(roots.get("doc"), ToolProxy):  # helpers and defs are documented here
            roots["doc"] = SessionDoc(self.state, roots["doc"])
        proxy_types = (ToolProxy, ToolNamespace)
        for name, old in self.tool_roots.items():
            if name not in roots and self.ns.get(name) is old:
                del self.ns[name]
                self.state.injected.pop(name, None)
        for name, proxy in roots.items():
            current = self.ns.get(name)
            if current is None or isinstance(current, proxy_types) or self.state.is_injected(name):
                self.state.inject(name, proxy)
        self.tool_roots = roots

    async def request(
        self, kind: str, target: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Send one ``call`` (``target``: its name) or ``hcall`` (handle and method) and wait
        for its result; many may be in flight."""
        if len(self.pending) >= self.max_calls:  # the host would stop this process
            raise RuntimeError(
                f"too many tool calls in flight ({self.max_calls:,}); "
                "await some before starting more"
            )
        self.next_id += 1
        rid = self.next_id
        # what cannot cross is named by its path: args[1][2], kwargs["conn"]
        encoded_args = [wire.encode(arg, root=f"args[{n}]") for n, arg in enumerate(args)]
        encoded_kwargs = wire.encode(kwargs, root="kwargs") if kwargs else {}
        message = (
            ToolCall(rid, target["name"], encoded_args, encoded_kwargs)
            if kind == "call"
            else HandleCall(rid, target["handle"], target["method"], encoded_args, encoded_kwargs)
        )
        try:
            line = framed(message)  # raises here, in the block, on what cannot be written
        except UnicodeEncodeError as exc:  # os.listdir's name of a file that is not UTF-8
            raise ValueError(
                f"{target.get('name') or target.get('method')}: an argument holds "
                f"{exc.object[exc.start : exc.end]!r}, a lone surrogate (how os.listdir() and "
                "os.walk() give a byte of a file name that is not UTF-8), which no tool call "
                "can carry; write that byte as \\xNN text, as ls() shows the name "
                "(e.g. 'data\\xff.csv'), which the file tools read as that byte"
            ) from None
        if len(line) > self.message_limit:  # the host would stop this process
            raise ValueError(
                f"the arguments of this call take {len(line):,} bytes, over the "
                f"{self.message_limit:,}-byte limit of one tool call; write big data to a "
                "file with open() in the sandbox instead"
            )
        future: asyncio.Future[Any] = self.loop.create_future()
        self.pending[rid] = future
        route = self.direct.get(target["name"]) if kind == "call" else None
        if route is None or not route.send(rid, line):
            self.write(line)
        try:
            return await future
        except BaseException:  # cancelled, or interrupted (Esc, Ctrl+C) mid-await: the host
            # stops the call too, or a tool that never returns would hold its extension
            if self.pending.pop(rid, None) is not None:
                # a direct call: its worker cancels it once it read it; the host, when it
                # runs already (the worker may be too busy with it to read the cancel)
                sent = self.direct_pending.pop(rid, None)
                if sent is not None:
                    sent[0].cancel(rid)
                self.send(CancelCall(rid))
            raise

    def on_result(self, msg: Result, *, tagged: bool) -> None:
        """Settle a call; ``tagged``: its message holds tagged values (tuples, records,
        handles...), so the value is decoded; plain data is the value as it is."""
        future = self.pending.pop(msg.id, None)
        if self.direct_pending:
            self.direct_pending.pop(msg.id, None)  # made directly, answered by the host
        if future is None or future.done():
            return
        if msg.ok:
            value = msg.value
            if tagged:
                try:
                    value = wire.decode(value, handle_in=self.make_handle)
                except (TypeError, ValueError, KeyError) as exc:
                    future.set_exception(TypeError(f"the tool's result could not be read: {exc}"))
                    return
            future.set_result(with_attributes(value))  # page.meta.total, as vis.tools gives
        else:
            err = msg.error or {}
            future.set_exception(
                rebuild_exception(str(err.get("type", "")), str(err.get("message", "")))
            )

    def make_handle(self, ref: dict[str, Any]) -> HandleProxy:
        return HandleProxy(ref, self.request)

    # -- blocks ------------------------------------------------------------------------------
    async def run_block(self, block_id: int, code: str) -> None:
        sys.stdout = sys.stderr = self.out
        self.interrupted = False
        filename = f"<block {block_id}>"
        error: str | None = None
        forms: list[dict[str, Any]] = []
        try:
            tree = ast.parse(code, filename)
            compiled = compile(tree, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except (SyntaxError, ValueError) as exc:
            error = "".join(traceback.format_exception_only(exc))
        else:
            register_source(filename, code)
            defs = top_level_defs(tree, code)
            before = self.state.before_block(block_id, defs)
            raised: BaseException | None = None
            try:
                self.in_user_code = True
                result = eval(compiled, self.ns)  # running the model's code is the point
                if compiled.co_flags & inspect.CO_COROUTINE:
                    await result
            except BaseException as exc:  # report everything, even SystemExit
                self.in_user_code = False
                raised = exc
                error = format_error(exc)
                if self.interrupted and isinstance(exc, asyncio.CancelledError):
                    # cancelled by on_sigint while the block was waiting
                    lines = error.rstrip("\n").split("\n")
                    lines[-1] = "KeyboardInterrupt"
                    error = "\n".join(lines) + "\n"
            finally:
                self.in_user_code = False
            for note in left_unawaited(self.ns, self.told_unawaited):
                print(note, file=self.out)
            self.state.after_block(block_id, defs, before)
            forms = block_forms(tree, code, raised, filename)
        self.finish(block_id, error, forms)

    def finish(self, block_id: int, error: str | None, forms: list[dict[str, Any]]) -> None:
        for stream in {id(s): s for s in (sys.stdout, sys.stderr, self.out)}.values():
            try:
                stream.flush()
            except Exception:  # a user stream that cannot flush loses output
                pass
        snapshot: dict[str, Any] | None = None
        try:
            snapshot = self.state.snapshot()
        except Exception as exc:  # keep the sandbox alive, say what failed
            error = (error or "") + f"\n[vis: saving helpers and variables failed: {exc!r}]"
        os.write(1, end_marker(self.nonce, block_id))
        error = None if error is None else wire.safe_text(keep_tail(error, MAX_ERROR_CHARS))
        try:
            line = framed(Done(block_id, error, snapshot, forms))
            if len(line) > self.message_limit:  # the host would stop this process
                raise ValueError(
                    f"the snapshot takes {len(line):,} bytes, over the "
                    f"{self.message_limit:,}-byte limit of one message"
                )
        except (TypeError, ValueError) as exc:  # text in a saved name or reason: never a hang
            note = f"[vis: saving helpers and variables failed: {type(exc).__name__}: {exc}]"
            note = wire.safe_text(note)
            line = framed(Done(block_id, f"{error or ''}\n{note}", None, forms))
            self.state.last_snapshot = None  # not sent: the next block sends one again
        self.write(line)

    def on_sigint(self, signum: int, frame: types.FrameType | None) -> None:
        if not self.in_user_code:
            return
        self.interrupted = True
        runner = Child.run_block.__code__
        f = frame
        while f is not None:
            if f.f_code is runner:
                raise KeyboardInterrupt
            f = f.f_back
        task = self.block_task
        if task is not None:
            self.loop.call_soon_threadsafe(task.cancel)

    def serve(self) -> None:
        signal.signal(signal.SIGINT, self.on_sigint)
        self.loop.add_reader(self.fd_in, self.on_readable)
        self.loop.run_forever()


_direct_tools = msgspec.msgpack.Decoder(DirectTools)


def main() -> None:
    """Entry point: protocol on the original stdin/stdout; fd 1 and 2 become the output pipe."""
    fds = take_protocol_fds()
    fd_in, fd_out = fds.read, fds.write
    out = open(
        1,
        "w",
        encoding="utf-8",
        errors="backslashreplace",
        buffering=1,
        closefd=False,
    )
    sys.stdout = sys.stderr = out
    warnings.showwarning = show_warning  # a call never awaited: what to write instead
    # The child starts isolated (-I): nothing of the working folder shadows what Vis imports.
    # The model's blocks may still import the workspace's own modules, found after the
    # standard library and the installed packages (never instead of them). The SDK's spec
    # name is imported first: an editable install's finder comes after the path, where a
    # checkout's own `blockether/` would otherwise be found.
    # (An editable install made before the name existed lacks it until `pip install -e .`.)
    if importlib.util.find_spec("blockether") is not None:
        import blockether.vis.extension  # noqa: F401

    sys.path.append(os.getcwd())
    enter_sandbox()  # the SDK refuses registration, vis.fs, vis.shell and vis.state here
    exit_with_parent()
    start_from_environment()  # jailed: 127.0.0.1 relayed to Vis's network proxy, if given
    child = Child(fd_in, fd_out, out)
    collector_on()
    child.serve()


if __name__ == "__main__":
    main()
