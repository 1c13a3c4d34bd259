"""Pid 1 of a code-interpreter sandbox (see `lab.tools.code_interpreter`): run as a script, as root.

Started by `unshare` inside fresh mount/net/pid/ipc/uts namespaces with `python -I -S` (stdlib only, so
it starts in ~20 ms). It makes mounts private, hides the caller's directories, mounts the work dir,
remounts the rest read-only, forks the code's process with rlimits under a fresh uid, and reports how
that process ended on a private pipe. Why ctypes and not `mount(8)`: one process less per call, and
errors come back as errno. Not imported by the lab: it only ever runs as its own process.
"""
import ctypes, json, os, resource, sys
cfg = json.loads(sys.argv[1])
status, work, uid = cfg["status_fd"], cfg["workdir"], cfg["uid"]
libc = ctypes.CDLL(None, use_errno=True)
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC, PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
KEEP = {"nosuid": NOSUID, "nodev": NODEV, "noexec": NOEXEC, "noatime": 1024, "nodiratime": 2048,
        "relatime": 1 << 21}

def mount(src, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None
    if libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "mount %s: %s" % (target, os.strerror(err)))

def unescape(path):  # mountinfo escapes space, tab, newline and backslash as \ooo
    return path.encode().decode("unicode_escape").encode("latin-1").decode()

def report(line):
    os.write(status, (line + "\n").encode())

try:
    mount(None, "/", None, REC | PRIVATE)  # nothing below may propagate back to the host
    with open(os.path.join(work, "main.py"), "rb") as f:
        code = f.read()
    keep = [(p, os.open(p, os.O_PATH)) for p in cfg["expose"]]  # grab before hiding their parents
    for path in cfg["hide"]:
        mount("tmpfs", path, "tmpfs", NOSUID | NODEV, "size=1m,mode=755")
    for path, fd in keep:
        os.makedirs(path, exist_ok=True)
        mount("/proc/self/fd/%d" % fd, path, None, BIND | REC)
        os.close(fd)
    for path, mode in cfg["scratch"]:
        os.makedirs(path, exist_ok=True)
        mount("tmpfs", path, "tmpfs", NOSUID | NODEV,
              "size=%dm,mode=%s,uid=%d,gid=%d" % (cfg["disk_mb"], mode, uid, uid))
    with open(os.path.join(work, "main.py"), "wb") as f:
        f.write(code)
    writable = {path for path, _ in cfg["scratch"]}
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    for fields in mounts:
        target = unescape(fields[4])
        if target in writable:
            continue
        flags = REMOUNT | BIND | RDONLY
        for opt in fields[5].split(","):
            flags |= KEEP.get(opt, 0)
        mount(None, target, None, flags)
except Exception as exc:
    report("setup-error %s" % exc)
    os._exit(0)

pid = os.fork()
if pid == 0:
    try:
        os.close(status)
        os.chdir(work)
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
while True:  # as pid 1 we also reap orphans the code leaves behind
    try:
        done, wstatus = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if done == pid:
        sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else 0
        report("signal %d" % sig if sig else "exit %d" % os.WEXITSTATUS(wstatus))
        break
os._exit(0)
