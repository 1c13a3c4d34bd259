"""Pid 1 of a code-interpreter sandbox (see `lab.tools.code_interpreter`): run as a script, as root.

Started by `unshare` inside fresh mount/net/pid/ipc/uts namespaces with `python -I -S` (stdlib only, so
it starts in ~20 ms). It builds the sandbox's whole filesystem on an empty tmpfs mounted over the call's
host work dir: the read-only binds, hidden dirs and import stubs the caller listed (`mounts`, parents
first), a minimal /dev, the namespace's own /proc, and one scratch tmpfs of `disk_mb` shared by /sandbox
(cwd and HOME), /tmp and /dev/shm. It then chroots into that root, remounts every mount but the scratch
read-only, forks the code's process with rlimits under a fresh uid, and reports how that process ended,
and how many pids the namespace handed out, on a private pipe. Why ctypes and not `mount(8)`: one process
less per call, and errors come back as errno. Not imported by the lab: it only ever runs as its own process.
"""
import ctypes
import json
import os
import resource
import sys

cfg = json.loads(sys.argv[1])
status, host_dir, uid = cfg["status_fd"], cfg["root"], cfg["uid"]
libc = ctypes.CDLL(None, use_errno=True)
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC, PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
KEEP = {"nosuid": NOSUID, "nodev": NODEV, "noexec": NOEXEC, "noatime": 1024, "nodiratime": 2048,
        "relatime": 1 << 21}
DEVICES = ("null", "zero", "full", "random", "urandom")
WRITABLE = (cfg["workdir"], "/tmp", "/dev/shm")  # the scratch tmpfs's three faces; all else is ro

def check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))

def mount(src, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None
    check(libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)), "mount %s" % target)

def bind_ro(src, target):
    mount(src, target, None, BIND | REC)
    mount(None, target, None, REMOUNT | BIND | RDONLY)  # at once: nothing below may write to the host

def at(path):  # where a path of the new root is, seen from the host side before the chroot
    return host_dir + path

def unescape(path):  # mountinfo escapes space, tab, newline and backslash as \ooo
    return path.encode().decode("unicode_escape").encode("latin-1").decode()

def report(line):
    os.write(status, (line + "\n").encode())

def make_dev():
    os.mkdir(at("/dev"))
    mount("tmpfs", at("/dev"), "tmpfs", NOSUID, "size=64k,mode=755")
    for name in DEVICES:  # bound from the host's, as containers may forbid mknod
        if os.path.exists("/dev/" + name):
            open(at("/dev/" + name), "w").close()
            mount("/dev/" + name, at("/dev/" + name), None, BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, at("/dev/" + name))

def make_scratch():
    # One tmpfs, so `disk_mb` caps the three writable dirs together; its own mount is detached once the
    # three binds hold it, so it appears nowhere else. Only the work dir belongs to the sandbox uid.
    scratch = at("/.scratch")
    os.mkdir(scratch)
    mount("tmpfs", scratch, "tmpfs", NOSUID | NODEV, "size=%dm,mode=755" % cfg["disk_mb"])
    for inside, mode in zip(WRITABLE, (0o700, 0o1777, 0o1777)):
        sub = scratch + "/" + inside.replace("/", "_")
        os.mkdir(sub)
        os.chmod(sub, mode)
        if inside == cfg["workdir"]:
            os.chown(sub, uid, uid)
        os.makedirs(at(inside), exist_ok=True)
        mount(sub, at(inside), None, BIND)
    check(libc.umount2(scratch.encode(), MNT_DETACH), "umount " + scratch)
    os.rmdir(scratch)

def apply(op, path, arg):
    """One entry of the caller's plan; parents come first, so a bind may sit on a hide and so on."""
    if op == "bind":
        os.makedirs(at(path), exist_ok=True)  # only ever in a tmpfs of ours: binds are read-only at once
        bind_ro(path, at(path))
    elif op == "hide" and os.path.isdir(path):
        mount("tmpfs", at(path), "tmpfs", NOSUID | NODEV, "size=64k,mode=755")
    elif op == "hide":  # a file: cover it with an empty one
        bind_ro("/dev/null", at(path))
    elif op == "stub":  # an installed package: an __init__ that refuses to import
        mount("tmpfs", at(path), "tmpfs", NOSUID | NODEV, "size=64k,mode=755")
        with open(at(path + "/__init__.py"), "w") as f:
            f.write("raise ModuleNotFoundError(%r, name=%r)\n" % (arg, path.rsplit("/", 1)[-1]))
    else:
        raise ValueError("unknown mount op %r" % op)

def remount_read_only():
    with open("/proc/self/mountinfo") as f:  # after the chroot: only the new root's mounts are listed
        mounts = [line.split() for line in f]
    for fields in mounts:
        target = unescape(fields[4])
        if target in WRITABLE:
            continue
        flags = REMOUNT | BIND | RDONLY
        for opt in fields[5].split(","):
            flags |= KEEP.get(opt, 0)
        mount(None, target, None, flags)

def build_root():
    with open(os.path.join(host_dir, "main.py"), "rb") as f:
        code = f.read()
    mount("tmpfs", host_dir, "tmpfs", NOSUID | NODEV, "size=1m,mode=755")  # the new, empty root
    for link, target in cfg["links"]:  # /bin -> usr/bin and the like
        os.symlink(target, at(link))
    make_dev()
    os.mkdir(at("/proc"))
    mount("/proc", at("/proc"), None, BIND | REC)  # the pid namespace's own, from `--mount-proc`
    make_scratch()  # before the plan: an interpreter prefix may live under /tmp
    for op, path, arg in cfg["mounts"]:
        apply(op, path, arg)
    with open(at(cfg["workdir"] + "/main.py"), "wb") as f:
        f.write(code)
    os.chroot(host_dir)
    os.chdir("/")
    remount_read_only()

try:
    mount(None, "/", None, REC | PRIVATE)  # nothing below may propagate back to the host
    build_root()
except Exception as exc:
    report("setup-error %s" % exc)
    os._exit(0)

pid = os.fork()
if pid == 0:
    try:
        os.close(status)
        os.chdir(cfg["workdir"])
        for name, value in cfg["rlimits"].items():
            resource.setrlimit(getattr(resource, name), tuple(value))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: setuid binaries grant nothing
        os.umask(0o077)
        os.execve(cfg["python"], [cfg["python"]] + cfg["argv"], cfg["env"])
    except BaseException as exc:
        os.write(2, ("sandbox: cannot start python: %s\n" % exc).encode())
    os._exit(127)

def pids_used():
    """The last pid this namespace handed out: how many tasks (processes and threads) ever started in
    it, so a bound on how many ran at once. RLIMIT_NPROC can only have been hit if it exceeds the limit,
    which tells the caller a process-limit hit from any other EAGAIN, however the tracebacks were cut."""
    try:
        with open("/proc/sys/kernel/ns_last_pid") as f:
            return int(f.read())
    except (OSError, ValueError):
        return -1

while True:  # as pid 1 we also reap orphans the code leaves behind
    try:
        done, wstatus = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if done == pid:
        sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else 0
        report(("signal %d" % sig if sig else "exit %d" % os.WEXITSTATUS(wstatus)) + " pids %d" % pids_used())
        break
os._exit(0)
