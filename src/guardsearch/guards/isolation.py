"""The operating system's confinement of the sandbox's child: bubblewrap and seccomp.

The Python-level layers of the sandbox (the AST allowlist, the child's restricted
builtins and audit hook) are filters with clear messages; what makes the child safe when
one of them is bypassed is this module. The child runs under bubblewrap (`bwrap`, a
maintained tool: Debian's `bubblewrap`, installed by `scripts/sandbox.sh`) with

- new user, PID, mount, network, IPC, UTS and cgroup namespaces: it runs as `nobody`
  with no capabilities, sees no process but its own (and no `/proc` at all), and has no
  network (a namespace of its own, no interface to the outside);
- a root file system of its own, read-only: the interpreter, its standard library (no
  `site-packages`), the shared libraries they load, the runner script and a minimal
  `/dev` (null, zero, random); nowhere to write, and nothing of `$HOME`, the run store,
  the repository or the host's `/etc`, `/tmp` and `/proc`;
- a seccomp filter (compiled with libseccomp through `pyseccomp`) that allows the system
  calls the runner needs and answers every other one with EPERM: no `socket`, no
  `fork`/`clone`, no `ptrace`, `mount`, `unshare`, `bpf`, `io_uring_*`, ...

Where bubblewrap, user namespaces or libseccomp are missing, starting a sandbox is
refused with `IsolationUnavailable` naming what is missing; the weaker process-only
mode (rlimits, no root, a network namespace where the kernel allows it) runs only when
the user asks for it: `GUARDSEARCH_SANDBOX=process` (docs/security.md).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from guardsearch.core.errors import ConfigError

SANDBOX_ENV = "GUARDSEARCH_SANDBOX"
Mode = Literal["bwrap", "process"]
MODES: tuple[Mode, ...] = ("bwrap", "process")
INSTALL_HINT = (
    "install bubblewrap (`scripts/sandbox.sh`, or `apt-get install bubblewrap`); "
    f"to run model-written code with process limits only, set {SANDBOX_ENV}=process"
)
# Where things are inside the sandbox.
PY_ROOT = "/opt/python"
LIB_DIR = "/opt/lib"
RUNNER_DIR = "/opt/runner"
# Shared libraries the interpreter and the standard library's extension modules may
# load inside: the C library and the small ones the stdlib links against. Extension
# modules that need others (tkinter, ssl, sqlite3, readline, curses) fail to import there.
_LIBRARIES = re.compile(
    r"^(ld-linux|libc\.|libm\.|libpython|libffi|libz\.|libbz2|liblzma|libmpdec|libexpat"
    r"|libuuid|libpthread|libdl\.|librt\.|libutil|libcrypt\.)"
)
# The system calls the child may make. Measured with strace (the runner starting,
# importing the allowed modules, answering calls, a MemoryError, a RecursionError, a
# CPU-limit kill): CPython used 26 of these; bubblewrap's init, under the same filter,
# waits (wait4). The rest are what libc and the stdlib call on other paths (clocks and
# sleeps, signals, polls, pipes, identity queries), none of which reaches past the
# namespaces. Everything else fails with EPERM.
ALLOWED_SYSCALLS = (
    "read", "write", "readv", "writev", "pread64", "close", "lseek", "fstat",
    "newfstatat", "statx", "stat", "lstat", "openat", "open", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents64", "getcwd", "fcntl", "ioctl",
    "dup", "dup2", "dup3", "mmap", "munmap", "mremap", "mprotect", "madvise", "brk",
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "getpid", "gettid",
    "getppid", "getuid", "geteuid", "getgid", "getegid", "getrlimit", "prlimit64",
    "setrlimit", "getrandom", "clock_gettime", "clock_getres", "clock_nanosleep",
    "nanosleep", "gettimeofday", "time", "futex", "set_tid_address", "set_robust_list",
    "rseq", "arch_prctl", "prctl", "sched_getaffinity", "sched_yield", "uname", "sysinfo",
    "poll", "ppoll", "select", "pselect6", "pipe2", "exit", "exit_group", "execve",
    "getresuid", "getresgid", "umask", "times", "getrusage", "kill", "tgkill", "wait4",
    "waitid", "close_range",
)  # fmt: skip


class IsolationUnavailable(ConfigError):
    """The OS cannot confine the sandbox's child here (and the user did not opt out)."""


def sandbox_mode() -> Mode:
    """How the child is confined: `bwrap` (default) or `process` (the user's opt-in)."""
    value = os.environ.get(SANDBOX_ENV, "bwrap").strip() or "bwrap"
    if value not in MODES:
        raise ConfigError(f"{SANDBOX_ENV} must be one of {', '.join(MODES)}, got {value!r}")
    return value


def ensure_isolation() -> Mode:
    """The sandbox mode, after checking that it can run here: IsolationUnavailable
    now (a run fails at its start, not at its first sandbox) when it cannot."""
    mode = sandbox_mode()
    if mode == "bwrap":
        check_bwrap()
    return mode


@contextlib.contextmanager
def child_command(
    runner: Path, args: list[str], mode: Mode
) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """The argv that runs `runner` with `args`, and the file descriptors the child must
    inherit (the seccomp program bwrap reads), open while the block runs: under
    bubblewrap, or (`process`) directly with `python -I -S`. Raises
    IsolationUnavailable when bubblewrap cannot confine a child here."""
    if mode == "process":
        yield [sys.executable, "-I", "-S", str(runner), *args], ()
        return
    check_bwrap()
    inner = [f"{PY_ROOT}/bin/python3", "-I", "-S", "-B", f"{RUNNER_DIR}/{runner.name}", *args]
    with _seccomp_fd() as fd:
        argv = [*_bwrap_base(), "--ro-bind", str(runner), f"{RUNNER_DIR}/{runner.name}",
                "--remount-ro", "/", "--seccomp", str(fd), *inner]  # fmt: skip
        yield argv, (fd,)


@contextlib.contextmanager
def _seccomp_fd() -> Iterator[int]:
    """A file descriptor holding the compiled filter, read from its start."""
    fd = os.memfd_create("gs-seccomp") if hasattr(os, "memfd_create") else _temp_fd()
    try:
        os.write(fd, seccomp_program())
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


def _temp_fd() -> int:
    fd, name = tempfile.mkstemp(prefix="gs-seccomp-")
    os.unlink(name)
    return fd


@functools.cache
def _bwrap_base() -> tuple[str, ...]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise IsolationUnavailable(
            f"the sandbox needs bubblewrap (bwrap), not found: {INSTALL_HINT}"
        )
    return (
        bwrap,
        "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
        "--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
        "--hostname", "sandbox", "--clearenv", "--setenv", "LC_ALL", "C.UTF-8",
        "--setenv", "LD_LIBRARY_PATH", LIB_DIR, "--setenv", "PATH", f"{PY_ROOT}/bin",
        *_python_view(), "--dev", "/dev", "--chdir", "/",
    )  # fmt: skip


def _python_view() -> list[str]:
    """Bind options for the interpreter, its stdlib (site-packages hidden) and the
    shared libraries they load, all read-only, at fixed paths inside."""
    executable = Path(os.path.realpath(sys.executable))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    inside = f"{PY_ROOT}/lib/{version}"
    out = ["--ro-bind", str(executable), f"{PY_ROOT}/bin/python3",
           "--ro-bind", str(stdlib), inside]  # fmt: skip
    for hidden in ("site-packages", "dist-packages"):
        if (stdlib / hidden).is_dir():
            out += ["--tmpfs", f"{inside}/{hidden}"]
    for lib in _shared_libraries(executable, stdlib):
        name = lib.name
        target = str(lib) if name.startswith("ld-linux") else f"{LIB_DIR}/{name}"
        out += ["--ro-bind", str(lib), target]
    return out


def _shared_libraries(executable: Path, stdlib: Path) -> list[Path]:
    """The shared libraries (by `ldd`) of the interpreter and the stdlib's extension
    modules, among those `_LIBRARIES` admits; the dynamic loader at its own path."""
    files = [str(executable), *map(str, sorted((stdlib / "lib-dynload").glob("*.so")))]
    try:
        listing = subprocess.run(
            ["ldd", *files], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise IsolationUnavailable(f"cannot list the interpreter's libraries (ldd): {exc}") from exc
    found: dict[str, Path] = {}
    for line in listing.splitlines():
        match = re.match(r"\s*(\S+)(?: => (\S+))? \(0x", line)
        if match is None:
            continue
        path = match.group(2) or match.group(1)
        lib = Path(path)
        if lib.is_absolute() and lib.exists() and _LIBRARIES.match(lib.name):
            found.setdefault(lib.name if not lib.name.startswith("ld-linux") else path, lib)
    if not any(p.name.startswith("libc.") for p in found.values()):
        raise IsolationUnavailable("cannot find the C library the interpreter loads (ldd)")
    return list(found.values())


@functools.cache
def seccomp_program() -> bytes:
    """The compiled seccomp filter (BPF): `ALLOWED_SYSCALLS` pass, the rest get EPERM."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # the package, or libseccomp.so.2 under it
        raise IsolationUnavailable(
            f"the sandbox's seccomp filter needs pyseccomp and libseccomp: {exc}; {INSTALL_HINT}"
        ) from exc
    rules = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))
    for name in ALLOWED_SYSCALLS:
        try:
            rules.add_rule(seccomp.ALLOW, name)
        except (ValueError, RuntimeError, OSError):
            continue  # not a system call on this architecture (e.g. `open` on arm64)
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.cache
def check_bwrap() -> None:
    """Start one confined `python -c pass` (once per process): IsolationUnavailable,
    with bwrap's own words, when the kernel refuses the namespaces or the filter."""
    try:
        with _seccomp_fd() as fd:
            argv = [*_bwrap_base(), "--remount-ro", "/", "--seccomp", str(fd),
                    f"{PY_ROOT}/bin/python3", "-I", "-S", "-c", "pass"]  # fmt: skip
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=60, check=False, pass_fds=(fd,)
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise IsolationUnavailable(f"bubblewrap could not start: {exc}; {INSTALL_HINT}") from exc
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise IsolationUnavailable(
            f"bubblewrap cannot confine the sandbox here ({said[0]}): the kernel must allow "
            f"user, PID, mount and network namespaces; {INSTALL_HINT}"
        )
