"""Where a database file lives: on a network file system, SQLite is not safe to write.

SQLite's locks rely on the file system's POSIX advisory locks, which NFS, SMB/CIFS and
FUSE mounts such as sshfs implement partly, late or not at all, and a WAL database's
`-shm` index is shared memory that other hosts cannot see ("How To Corrupt An SQLite
Database File", sections 2.1 and 2.2; "WAL mode", section 8).  Two annotators writing one
shared file there can corrupt it.  So the door opens such a file read-only unless the user
insists (`--allow-network-db`, `MCQLENS_ALLOW_NETWORK_DB=1`); a team keeps one database
each and combines them with `mcqlens merge`.

Linux says where a file lives in /proc/self/mountinfo (or /proc/mounts); elsewhere there is
no table to read and nothing is judged (the file is opened as before).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

# file-system types (as the mount table names them) whose locking SQLite cannot rely on
NETWORK_TYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "afs", "9p", "ceph", "glusterfs", "lustre", "gpfs",
    "davfs", "coda", "fuse.sshfs", "fuse.glusterfs", "fuse.cephfs", "fuse.davfs2", "fuse.rclone", "fuse.s3fs",
    "fuse.gcsfuse", "fuse.smbnetfs",
})
MOUNT_TABLES = ("/proc/self/mountinfo", "/proc/mounts")
ALLOW_ENV = "MCQLENS_ALLOW_NETWORK_DB"  # "1": the user insists on writing a database on a network file system


def allowed(given: bool | None = None) -> bool:
    """May a database on a network file system be written?  `given` (a parameter, the gui's
    `--allow-network-db`) decides; without it, the environment's MCQLENS_ALLOW_NETWORK_DB=1."""
    if given is not None:
        return bool(given)
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "yes", "true", "on")


@dataclass(frozen=True)
class Mount:
    point: str  # where it is mounted
    fstype: str  # the file system's type, e.g. "nfs4", "fuse.sshfs"


def system_mount_table() -> str | None:
    """This system's mount table as text, or None where there is none to read (not Linux)."""
    for name in MOUNT_TABLES:
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            continue
    return None


def mounts(table: str) -> list[Mount]:
    """The mounts listed in `table`, in the format of /proc/self/mountinfo or of /proc/mounts."""
    found = []
    for line in table.splitlines():
        fields = line.split()
        if " - " in line and len(fields) >= 7:  # mountinfo: ID PARENT DEV ROOT POINT OPTIONS ... - TYPE SOURCE ...
            point, fstype = fields[4], line.split(" - ", 1)[1].split()[0]
        elif len(fields) >= 3:  # mounts: SOURCE POINT TYPE OPTIONS ...
            point, fstype = fields[1], fields[2]
        else:
            continue
        found.append(Mount(_unescape(point), fstype))
    return found


def _unescape(point: str) -> str:
    # the kernel writes a space, tab, newline and backslash in a mount point as \040 \011 \012 \134
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        point = point.replace(code, char)
    return point


def mount_of(path: str | os.PathLike, table: str) -> Mount | None:
    """The mount holding `path` (its folder when the file does not exist yet): the one with the
    longest mount point above it; the last listed of equal ones (a later mount hides an earlier)."""
    target = os.path.realpath(path)
    if not os.path.exists(target):
        target = os.path.realpath(os.path.dirname(target) or ".")
    best = None
    for m in mounts(table):
        point = m.point.rstrip("/") or "/"
        if target == point or target.startswith(point if point == "/" else point + "/"):
            if best is None or len(point) >= len(best.point.rstrip("/") or "/"):
                best = m
    return best


def where(path: str | os.PathLike, table: str | None = None) -> Mount | None:
    """The network mount `path` lives on, or None (a local file system, or no table to read).
    `table`: a mount table's text to judge by (tests); None reads this system's."""
    if table is None:
        table = system_mount_table()
        if table is None:
            return None
    m = mount_of(path, table)
    return m if m is not None and m.fstype in NETWORK_TYPES else None


def refusal(path: str | os.PathLike, mount: Mount) -> str:
    """What the user reads: where the file is, why it is not written, and how to work instead."""
    return (f"{path} is on a network file system ({mount.fstype} at {mount.point}), where SQLite's locks are not "
            "reliable and two people writing one file can corrupt it; it is not written to unless you insist "
            "(mcqlens gui --allow-network-db, or MCQLENS_ALLOW_NETWORK_DB=1). A team keeps one database each on "
            "a local disk and combines them with mcqlens merge")
