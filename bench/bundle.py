#!/usr/bin/env python3
"""Write a minimal rootless OCI bundle for crun and runc (make bench).

Usage: bundle.py DIR WORKSPACE CMD [ARG]...

The config starts from `crun spec --rootless` and is adjusted to the agent
policy's shape: the same seven namespaces, the host's /usr and /etc bound
read-only, /bin, /sbin, /lib* as symlinks into /usr, a fresh /proc (with the
runtime's default masked and read-only paths), a small /dev, tmpfs /tmp and
/home/sandbox, the workspace bound read-write, no terminal, no sysfs or
cgroup mount (paddock mounts neither). The root file system is an empty
read-only directory holding the mount points and symlinks.
"""
import json, os, subprocess, sys

bundle, workspace, args = sys.argv[1], sys.argv[2], sys.argv[3:]
rootfs = os.path.join(bundle, "rootfs")
os.makedirs(rootfs, exist_ok=True)
for d in ("usr", "etc", "proc", "dev", "tmp", "home/sandbox", workspace.lstrip("/")):
    os.makedirs(os.path.join(rootfs, d), exist_ok=True)
for name in ("bin", "sbin", "lib", "lib64", "lib32"):
    if os.path.exists("/usr/" + name) and not os.path.lexists(os.path.join(rootfs, name)):
        os.symlink("usr/" + name, os.path.join(rootfs, name))
subprocess.run(["crun", "spec", "--rootless"], cwd=bundle, check=True)
path = os.path.join(bundle, "config.json")
cfg = json.load(open(path))
proc = cfg["process"]
proc["terminal"] = False
proc["args"] = args
proc["cwd"] = workspace
proc["env"] = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/sandbox"]
for k in proc["capabilities"]:
    proc["capabilities"][k] = []
ro = ["rbind", "ro", "nosuid", "nodev"]
cfg["mounts"] = [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "mode=755", "size=64k"]},
    {"destination": "/usr", "type": "bind", "source": "/usr", "options": ro},
    {"destination": "/etc", "type": "bind", "source": "/etc", "options": ro},
    {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "nodev", "mode=1777", "size=1g"]},
    {"destination": "/home/sandbox", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "nodev", "mode=700", "size=64m"]},
    {"destination": workspace, "type": "bind", "source": workspace,
     "options": ["rbind", "rw", "nosuid", "nodev"]},
]
cfg["hostname"] = "paddock"
lx = cfg["linux"]
lx["namespaces"] = [{"type": t} for t in
                    ("pid", "network", "ipc", "uts", "user", "mount", "cgroup")]
lx.pop("resources", None)
lx["uidMappings"] = [{"containerID": 0, "hostID": os.getuid(), "size": 1}]
lx["gidMappings"] = [{"containerID": 0, "hostID": os.getgid(), "size": 1}]
json.dump(cfg, open(path, "w"), indent=1)
