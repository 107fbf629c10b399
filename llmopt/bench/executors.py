"""How the tasks of a suite are executed: in-process, a local process pool, or Ray.

An executor runs :func:`llmopt.bench.tasks.run_task` for each task and hands every
record to the driver's ``on_result`` callback the moment it arrives; only the driver
writes results (:mod:`llmopt.bench.store`). When a worker dies, its task is reported through
``on_lost`` and runs again on the next resume. When the driver is interrupted
(``KeyboardInterrupt``, which :mod:`llmopt.bench.harness` also raises for SIGTERM), the
executor delivers every record that has already arrived, stops its workers and
re-raises.

``local`` (the default) — ``N`` processes started with the ``spawn`` method from the
driver's main thread, each fed one task at a time through its own pipe. A pool of our
own rather than :class:`concurrent.futures.ProcessPoolExecutor`: the driver knows which
task each worker holds, can terminate workers at once (the executor's pool waits for
tasks in flight, or needs private attributes to kill them), and the workers are direct
children of the driver, which the parent-death signal below needs (a forkserver would be
their parent). Workers die with their driver:

* normal end, Ctrl-C, SIGTERM, SIGHUP: the driver saves what finished, then terminates
  (SIGTERM, then SIGKILL after 2 s) and reaps every worker;
* SIGKILL of the driver, or any other death (Linux): each worker has asked the kernel
  for ``SIGKILL`` when its parent dies (``prctl(PR_SET_PDEATHSIG)``), so workers go at
  once, even in the middle of a solve in C code. ``PR_SET_PDEATHSIG`` fires when the
  *thread* that created the worker exits, so workers are started from the thread that
  runs the suite (the main thread, for the command line);
* elsewhere (no ``prctl``) a watchdog thread in each worker kills it within a second of
  noticing its parent changed, as soon as it gets the interpreter lock (a long solve in a
  C extension that holds the lock delays it), and an idle worker exits when its pipe to
  the driver closes.

Workers stay in the driver's process group, so ``kill -- -PGID`` stops the whole run;
they ignore SIGINT, so a Ctrl-C at a terminal (sent to the whole group) reaches only the
driver, which stops them in order.

``ray`` — tasks are Ray remote functions (one CPU each); ``ray`` is imported only when
this executor is chosen. Without an address a local Ray instance is started (and shut
down at the end); with ``address`` (``auto``, ``ray://host:10001``) the driver joins that
cluster, whose workers must have llmopt (and any plug-ins) installed. On interrupt,
finished results are saved and the other tasks are cancelled.

``inline`` — tasks run one after another in the driver's own process: for debugging and
profiling. A SIGTERM is handled when the task in progress returns control to Python.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

from llmopt.bench.store import HarnessError
from llmopt.bench.suites import Suite, Task
from llmopt.bench.tasks import run_task

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "InlineExecutor", "EXECUTORS", "make_executor",
           "default_workers"]

OnResult = Callable[[Task, dict[str, Any]], None]
OnLost = Callable[[Task, str], None]

EXECUTORS = ("local", "ray", "inline")


def _quiet(msg: str) -> None:
    pass


class Executor(Protocol):
    """Runs tasks and passes each record to ``on_result`` as soon as it exists."""

    name: str

    @property
    def slots(self) -> int | None:
        """How many tasks run at once (for the run log); ``None`` if not known before the run."""
        ...

    def run(self, suite: Suite, tasks: Sequence[Task], on_result: OnResult, on_lost: OnLost,
            log: Callable[[str], None] = ...) -> None:
        """Run ``tasks``; on ``KeyboardInterrupt`` deliver what finished, stop the workers, re-raise.

        ``log`` receives messages about the workers themselves (e.g. one that had to be killed).
        """
        ...


def default_workers() -> int:
    """Every CPU this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """The executor called ``name`` (see :data:`EXECUTORS`).

    Raises
    ------
    HarnessError
        For an unknown name, an ``address`` given to another executor than ``ray``, or
        ``ray`` chosen but not installed.
    """
    if name not in EXECUTORS:
        raise HarnessError(f"unknown executor {name!r}; known: {', '.join(EXECUTORS)}")
    if address is not None and name != "ray":
        raise HarnessError(f"an address ({address!r}) is only used by the ray executor, not {name!r}")
    if workers is not None and workers < 1:
        raise HarnessError(f"workers must be at least 1, got {workers}")
    if name == "local":
        return LocalExecutor(workers)
    if name == "inline":
        return InlineExecutor()
    if address is not None:
        check_ray_address(address)
    elif os.environ.get("RAY_ADDRESS"):
        # ray.init() joins RAY_ADDRESS: a dead head there costs minutes of Ray's retries and log lines.
        check_ray_address(os.environ["RAY_ADDRESS"], source="RAY_ADDRESS")
    return RayExecutor(workers, address)


def parse_ray_address(address: str, source: str = "--address") -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; ``None`` for ``auto``.

    ``source`` names where the address came from in messages (``--address`` or ``RAY_ADDRESS``).

    Raises
    ------
    HarnessError
        For anything else, naming the accepted forms.
    """
    if address == "auto":
        return None
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    if sep and host and "/" not in host and port.isdigit() and 1 <= int(port) <= 65535:
        return host.strip("[]"), int(port)
    raise HarnessError(f"{source} {address!r} is not a Ray address; give auto (the cluster this machine "
                       "belongs to), HOST:PORT (a head node's GCS, port 6379 by default) or ray://HOST:PORT "
                       "(Ray Client, port 10001 by default)")


#: An HTTP/2 client's connection preface followed by an empty SETTINGS frame (RFC 9113 §3.4, §6.5).
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 0x4


def _grpc_answer(where: tuple[str, int], timeout: float) -> str | None:
    """``None`` when the server at ``where`` answers an HTTP/2 preface as gRPC servers do (a SETTINGS frame
    on stream 0); otherwise why not, in words.

    A Ray head's GCS (``HOST:PORT``) and its Ray Client server (``ray://``) are both gRPC servers, which
    speak HTTP/2. Nine bytes tell them from anything else listening on the port, in milliseconds and with
    no Ray import, where ``ray.init`` would retry for minutes and print Ray's log lines.
    """
    import socket

    try:
        with socket.create_connection(where, timeout=timeout) as conn:
            conn.settimeout(timeout)
            conn.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:
                chunk = conn.recv(9 - len(head))
                if not chunk:
                    return "it closed the connection without an HTTP/2 answer"
                head += chunk
    except TimeoutError:
        return f"no HTTP/2 answer within {timeout:g} s"
    except ConnectionResetError:  # closed with our preface unread
        return "it closed the connection without an HTTP/2 answer"
    except OSError as exc:
        return f"the connection failed: {exc.strerror or type(exc).__name__}"
    if head[3] != _H2_SETTINGS or int.from_bytes(head[5:9], "big") & 0x7FFFFFFF != 0:
        return f"it answered {head[:9]!r}, not an HTTP/2 SETTINGS frame"
    return None


def check_ray_address(address: str, timeout: float = 5.0, source: str = "--address") -> None:
    """Fail in one line, before any work, for an address that is malformed, unreachable, answered
    by something that is not a gRPC server (every Ray head port the driver joins, GCS or Ray Client,
    is one), or (for ``ray://``) needs the Ray Client extra that is not installed. Ray itself would
    wait up to minutes, printing its log lines, for an unreachable GCS or one that does not answer.
    With ``RAY_USE_TLS`` set the head speaks TLS first, so only the TCP connection is checked.

    Parameters
    ----------
    address : str
        ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``.
    timeout : float
        Seconds to wait for the TCP connection, and again for the server's first HTTP/2 frame.
    source : str
        Where the address came from, for the message: ``--address`` or ``RAY_ADDRESS``.

    Raises
    ------
    HarnessError
        Naming ``source``, the address and why it cannot be used.
    """
    import importlib.util
    import socket

    where = parse_ray_address(address, source)
    if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        raise HarnessError(f"{source} {address}: Ray Client (ray://) needs grpcio, which is not installed; "
                           "install it with: pip install 'llmopt[ray]' (it includes ray[client])")
    if where is None:
        return
    try:
        socket.create_connection(where, timeout=timeout).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__.lower().replace("error", " error").strip()
        unset = " (or unset RAY_ADDRESS for a local Ray instance)" if source == "RAY_ADDRESS" else ""
        raise HarnessError(f"{source} {address}: cannot reach {where[0]}:{where[1]} ({why}); is a Ray head "
                           f"running there (`ray start --head`)?{unset}") from None
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return
    answer = _grpc_answer(where, timeout)
    if answer is not None:
        unset = " (or unset RAY_ADDRESS for a local Ray instance)" if source == "RAY_ADDRESS" else ""
        port = "its Ray Client port (10001 by default)" if address.startswith("ray://") else \
            "its GCS port (6379 by default)"
        raise HarnessError(f"{source} {address}: {where[0]}:{where[1]} is open but is not a Ray head ({answer}); "
                           f"give the head's address and {port}{unset}")


# --- inline -----------------------------------------------------------------------------------


class InlineExecutor:
    """Every task in the driver's process, one after another."""

    name = "inline"
    slots = 1

    def run(self, suite: Suite, tasks: Sequence[Task], on_result: OnResult, on_lost: OnLost,
            log: Callable[[str], None] = _quiet) -> None:
        for task in tasks:
            on_result(task, run_task(suite, task))


# --- local process pool ----------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _die_with_driver(driver_pid: int) -> None:
    """Make this worker die when the driver does (see the module docstring)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != driver_pid:  # the driver died before the request above took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != driver_pid:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="llmopt-driver-watch", daemon=True).start()


def _worker_main(conn: Connection, driver_pid: int, suite: Suite) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # The driver blocks SIGINT and SIGTERM while it starts a worker, and the mask can be
    # inherited: unblock, so a SIGTERM sent meanwhile is delivered (and ends us) now.
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    _die_with_driver(driver_pid)
    from llmopt.bench.plugins import load_plugins

    try:
        load_plugins()  # plug-in names must resolve here too
    except Exception:  # already reported by the driver; a clash must not break the worker
        pass
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):  # the driver is gone
            return
        if task is None:
            return
        conn.send(run_task(suite, task))


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (" (out of memory?)" if -code == signal.SIGKILL else "")
    return f"exit code {code}"


class _Worker:
    def __init__(self, ctx: Any, suite: Suite, index: int) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_worker_main, args=(child, os.getpid(), suite), daemon=True,
                                name=f"llmopt-worker-{index}")
        self.task: Task | None = None
        self.started = False
        self._child = child

    def start(self) -> None:
        in_main = threading.current_thread() is threading.main_thread()
        # The worker inherits an ignored SIGINT through exec, so a Ctrl-C while it starts up
        # does not print a traceback from it; signals for the driver wait until it is started.
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        old_int = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
        try:
            self.proc.start()
            self.started = True
        finally:
            if in_main:
                signal.signal(signal.SIGINT, old_int)
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            self._child.close()


class LocalExecutor:
    """A pool of ``spawn`` worker processes on this machine (see the module docstring)."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()

    @property
    def slots(self) -> int:
        return self.workers

    def run(self, suite: Suite, tasks: Sequence[Task], on_result: OnResult, on_lost: OnLost,
            log: Callable[[str], None] = _quiet) -> None:
        if not tasks:
            return
        ctx = multiprocessing.get_context("spawn")
        queue = deque(tasks)
        pool: list[_Worker] = []
        idle: list[_Worker] = []
        deaths = 0  # of workers, before any worker returned a record

        def spawn() -> None:
            w = _Worker(ctx, suite, len(pool))
            pool.append(w)  # before start: a signal during start must still stop it
            w.start()
            idle.append(w)

        try:
            for _ in range(min(self.workers, len(queue))):
                spawn()
            while queue or any(w.task is not None for w in pool):
                while idle and queue:
                    w = idle.pop()
                    w.task = queue.popleft()
                    try:
                        w.conn.send(w.task)
                    except (BrokenPipeError, OSError):
                        queue.appendleft(w.task)
                        w.task = None
                        deaths = self._retire(w, pool, deaths)
                        spawn()
                busy = {w.conn: w for w in pool if w.task is not None}
                if not busy:
                    continue
                for ready in wait(list(busy)):
                    w = busy[ready]  # type: ignore[index]
                    task = w.task
                    assert task is not None
                    try:
                        # w.task stays set until the record is in hand: an interrupt here leaves it for
                        # _deliver_finished to collect
                        rec = w.conn.recv()
                    except (EOFError, OSError):
                        w.task = None
                        w.proc.join(timeout=5)
                        on_lost(task, f"worker pid {w.proc.pid} died ({_exit_text(w.proc.exitcode)})")
                        deaths = self._retire(w, pool, deaths)
                        if queue:
                            spawn()
                        continue
                    w.task = None
                    deaths = -1  # workers can run tasks: from now on a death costs only its task
                    on_result(task, rec)
                    idle.append(w)
        except BaseException:
            try:
                self._deliver_finished(pool, on_result)
            finally:
                self._stop(pool, graceful=False, log=log)
            raise
        self._stop(pool, graceful=True, log=log)

    @staticmethod
    def _retire(w: _Worker, pool: list[_Worker], deaths: int) -> int:
        """Drop a dead worker; give up when three die before any returns a record."""
        pool.remove(w)
        w.conn.close()
        w.proc.join(timeout=5)
        if deaths < 0:
            return deaths
        if deaths + 1 >= 3:
            raise HarnessError(f"worker processes die before finishing any task ({_exit_text(w.proc.exitcode)}); "
                               "try --executor inline to see why")
        return deaths + 1

    @staticmethod
    def _deliver_finished(pool: list[_Worker], on_result: OnResult) -> None:
        for w in pool:
            if w.task is None:
                continue
            try:
                if w.conn.poll():
                    rec = w.conn.recv()
                    task, w.task = w.task, None
                    on_result(task, rec)
            except (EOFError, OSError):
                pass

    @staticmethod
    def _stop(pool: list[_Worker], graceful: bool, log: Callable[[str], None]) -> None:
        pool = [w for w in pool if w.started]
        if graceful:
            for w in pool:
                try:
                    w.conn.send(None)
                except OSError:
                    pass
        for w in pool:
            if not graceful and w.proc.is_alive():
                w.proc.terminate()
        deadline = time.monotonic() + 2.0
        for w in pool:
            w.proc.join(timeout=max(0.0, deadline - time.monotonic()))
        for w in pool:
            if w.proc.is_alive():
                log(f"worker pid {w.proc.pid} did not stop within 2 s; killed it")
                w.proc.kill()
                w.proc.join()
            w.conn.close()


# --- ray ------------------------------------------------------------------------------------------


def _ray_task(suite: Suite, task: Task) -> dict[str, Any]:
    from llmopt.bench.plugins import load_plugins

    try:
        load_plugins()
    except Exception:
        pass
    return run_task(suite, task)


class RayExecutor:
    """Tasks as Ray remote functions, one CPU each (see the module docstring).

    Parameters
    ----------
    workers : int, optional
        At most this many tasks in flight (default: all; Ray schedules them on free
        CPUs). For a local instance started here, also its CPU count (default: every
        CPU of this machine).
    address : str, optional
        Cluster to join (``auto``, ``ray://host:10001``); default: ``RAY_ADDRESS`` if
        set, else a new local instance. A Ray session already initialised in this
        process is used as it is.
    """

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        try:
            import ray
        except ImportError as exc:
            raise HarnessError(f"the ray executor needs the ray package, which is not installed ({exc}); "
                               "install it with: pip install 'llmopt[ray]'") from None
        self._ray = ray
        self.workers = workers
        self.address = address

    @property
    def slots(self) -> int | None:
        if self.workers:
            return self.workers
        ray = self._ray
        if ray.is_initialized():
            return int(ray.cluster_resources().get("CPU", 0)) or None
        return default_workers() if self.address is None and not os.environ.get("RAY_ADDRESS") else None

    def run(self, suite: Suite, tasks: Sequence[Task], on_result: OnResult, on_lost: OnLost,
            log: Callable[[str], None] = _quiet) -> None:
        if not tasks:
            return
        ray = self._ray
        owned = not ray.is_initialized()
        if owned:
            # ray.init installs its own SIGTERM handler (sys.exit); keep the driver's, which
            # saves finished tasks first.
            in_main = threading.current_thread() is threading.main_thread()
            sigterm = signal.getsignal(signal.SIGTERM) if in_main else None
            try:
                if self.address is not None:
                    ray.init(address=self.address)
                elif os.environ.get("RAY_ADDRESS"):
                    ray.init()
                else:
                    ray.init(num_cpus=self.workers or default_workers(), include_dashboard=False)
            except (ConnectionError, ValueError, RuntimeError) as exc:  # no traceback for a cluster not there
                target = self.address or os.environ.get("RAY_ADDRESS") or "a local instance"
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                hint = ""
                if self.address is not None and not os.environ.get("RAY_AUTH_MODE") and \
                        (Path.home() / ".ray" / "auth_token").exists():
                    hint = ("; this machine has a Ray auth token (~/.ray/auth_token): if the cluster was started "
                            "with token authentication, run with RAY_AUTH_MODE=token")
                raise HarnessError(f"ray: cannot connect to {target}: {first}{hint}") from None
            if in_main and sigterm is not None:
                signal.signal(signal.SIGTERM, sigterm)
        try:
            self._run(ray, suite, tasks, on_result, on_lost)
        finally:
            if owned:
                ray.shutdown()

    def _run(self, ray: Any, suite: Suite, tasks: Sequence[Task], on_result: OnResult, on_lost: OnLost) -> None:
        remote = ray.remote(num_cpus=1)(_ray_task)
        suite_ref = ray.put(suite)
        queue = deque(tasks)
        limit = self.workers or len(tasks)
        pending: dict[Any, Task] = {}
        try:
            while queue or pending:
                while queue and len(pending) < limit:
                    task = queue.popleft()
                    pending[remote.remote(suite_ref, task)] = task
                # A timeout keeps the driver responsive to signals between waits.
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
                for ref in ready:
                    task = pending.pop(ref)
                    try:
                        rec = ray.get(ref)
                    except Exception as exc:  # the task's worker or node died (run_task itself never raises)
                        on_lost(task, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                        continue
                    on_result(task, rec)
        except BaseException:
            if pending:
                ready, rest = ray.wait(list(pending), num_returns=len(pending), timeout=0)
                for ref in ready:
                    try:
                        on_result(pending[ref], ray.get(ref, timeout=5))
                    except Exception:
                        pass
                for ref in rest:
                    try:
                        ray.cancel(ref, force=True)
                    except Exception:
                        pass
            raise
