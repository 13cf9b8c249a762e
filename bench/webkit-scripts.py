#!/usr/bin/python3
"""What a WebKitGTK web process keeps for each script it is sent to run.

Tauri sends each small Channel message to the window as a script of its
own (`runCallback(ID, {message: ..., index: N})`, a new text every time).
This runs N scripts in a blank WebKitGTK 4.1 web view (the library and
version Tauri uses on Linux), either each a different text, as Tauri's are,
or N times the same text, as the app's drain now is (src-tauri/src/
commands/channels.rs), and prints the web process's private memory every
5,000 scripts and 3 s after the last.

    xvfb-run -a bench/webkit-scripts.py [N] [distinct|same]

N defaults to 40000; the mode to distinct.
"""
import os
import sys

for name, value in (("GDK_GL", "disable"), ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"), ("WEBKIT_DISABLE_COMPOSITING_MODE", "1")):
    os.environ.setdefault(name, value)

import gi  # noqa: E402

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import GLib, Gtk, WebKit2  # noqa: E402

TOTAL = int(sys.argv[1]) if len(sys.argv) > 1 else 40000
DISTINCT = (sys.argv[2] if len(sys.argv) > 2 else "distinct") == "distinct"
BATCH = 200


def web_process():
    """The web process this process started."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as comm, open(f"/proc/{pid}/stat") as stat:
                if comm.read().strip() == "WebKitWebProces" and int(stat.read().split()[3]) == os.getpid():
                    return pid
        except OSError:
            continue
    raise SystemExit("no web process")


def private_mib():
    with open(f"/proc/{web_process()}/smaps_rollup") as rollup:
        kib = sum(int(line.split()[1]) for line in rollup if line.startswith(("Private_Clean", "Private_Dirty")))
    return kib // 1024


sent = 0


def send():
    global sent
    for _ in range(BATCH):
        if DISTINCT:
            script = f'window.__cb({sent}, {{"type":"delta","text":"token {sent} of the stream"}})'
        else:
            script = 'window.__cb(0, {"type":"delta","text":"token"})'
        view.evaluate_javascript(script, -1, None, None, None, None, None)
        sent += 1
    if sent % 5000 == 0:
        print(f"{sent} scripts: {private_mib()} MiB", flush=True)
    if sent >= TOTAL:
        GLib.timeout_add(3000, finish)
        return False
    return True


def finish():
    print(f"3 s after: {private_mib()} MiB", flush=True)
    Gtk.main_quit()
    return False


def loaded(_view, event):
    if event == WebKit2.LoadEvent.FINISHED:
        print(f"{'distinct' if DISTINCT else 'the same'} scripts; at start: {private_mib()} MiB", flush=True)
        GLib.timeout_add(1, send)


window = Gtk.Window(title="scripts")
window.set_default_size(800, 600)
window.connect("destroy", Gtk.main_quit)
view = WebKit2.WebView()
view.connect("load-changed", loaded)
view.load_html("<!doctype html><script>let n = 0; window.__cb = (id, e) => { n += e.text.length; };</script>", "about:blank")
window.add(view)
window.show_all()
Gtk.main()
