"""Can a window open here?  Asked before the QApplication exists.

When Qt cannot start its platform plugin (no X display, or the system libraries of its
xcb plugin are missing) it prints a few lines about plugins and *aborts* the process:
nothing can be caught after that.  So the cases that cause it are checked first, and
each gets one line that says what to do.  Only the default Linux path is checked (the
xcb plugin, used when QT_QPA_PLATFORM is not set outside a Wayland session, or set to
xcb); any other platform the user names (offscreen, wayland, vnc, ...) is trusted.
MCQLENS_DISPLAY_CHECK=0 skips the check.

The plugin's system libraries (``ldd`` on PySide6's ``libqxcb.so``, PySide6 6.x), as
Debian/Ubuntu package names; README.md lists the same set.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import sys
from pathlib import Path

# soname → Debian/Ubuntu package, for what libqxcb.so (and Qt's xcb QPA library) loads
XCB_LIBRARIES = {
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
}
FIX_NO_DISPLAY = ("run it in a desktop session, or under a virtual display (xvfb-run mcqlens gui ...); "
                  "for --screenshot alone, QT_QPA_PLATFORM=offscreen needs no display")


def package_of(soname: str) -> str:
    """The Debian/Ubuntu package that ships `soname` (libfoo.so.N → libfooN, libfoo-1.so.N → libfoo-1-N)."""
    if soname in XCB_LIBRARIES:
        return XCB_LIBRARIES[soname]
    m = re.fullmatch(r"(lib.+?)\.so\.(\d+)(?:\..*)?", soname)
    if not m:
        return soname
    name, major = m.group(1).lower(), m.group(2)
    return f"{name}-{major}" if name[-1].isdigit() else f"{name}{major}"


def _loadable(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def xcb_plugin() -> Path | None:
    """PySide6's xcb platform plugin, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if path.is_file():
            return path
    return None


def missing_libraries() -> list[str]:
    """The sonames the xcb plugin needs that cannot be loaded here, in the plugin's order."""
    missing = [name for name in XCB_LIBRARIES if not _loadable(name)]
    plugin = xcb_plugin()
    if not missing and plugin is not None:
        # a library the table above does not know (a newer PySide6): the loader names it
        try:
            ctypes.CDLL(str(plugin))
        except OSError as exc:
            m = re.search(r"(lib[\w.+-]+\.so[\w.]*): cannot open shared object", str(exc))
            if m:
                missing.append(m.group(1))
    return missing


def _x_server_answers(display: str) -> bool:
    """Whether the X server `display` accepts a connection (libxcb, as Qt would)."""
    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return True  # reported as a missing library instead
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
    xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
    conn = xcb.xcb_connect(display.encode(), None)
    try:
        return conn is not None and xcb.xcb_connection_has_error(conn) == 0
    finally:
        if conn is not None:
            xcb.xcb_disconnect(conn)


def platform(env=None) -> str:
    """The platform plugin Qt will try first: QT_QPA_PLATFORM's first entry, else Qt's default."""
    env = os.environ if env is None else env
    chosen = (env.get("QT_QPA_PLATFORM") or "").split(";")[0].split(":")[0].strip()
    if chosen:
        return chosen
    if not sys.platform.startswith("linux"):
        return "native"
    if env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland"
    return "xcb"


def problem(env=None) -> str | None:
    """Why no window can open here, in one line with the fix; None when it can (or is not checked)."""
    env = os.environ if env is None else env
    if env.get("MCQLENS_DISPLAY_CHECK") == "0" or platform(env) != "xcb":
        return None
    reasons = []
    display = env.get("DISPLAY", "")
    if not display:
        reasons.append("no display (DISPLAY is not set)")
    missing = missing_libraries()
    if missing:
        packages = " ".join(dict.fromkeys(package_of(m) for m in missing))
        reasons.append(f"Qt's xcb platform plugin needs {', '.join(missing)}, not installed "
                       f"(Debian/Ubuntu: sudo apt-get install {packages}; README.md lists what a desktop needs)")
    elif display and not _x_server_answers(display):
        reasons.append(f"the X display {display!r} does not answer")
    if not reasons:
        return None
    fix = f"; {FIX_NO_DISPLAY}" if not display or not missing else ""
    return "cannot open the window: " + "; and ".join(reasons) + fix
