#!/usr/bin/python3
"""The memory floor of a Corral window: a blank WebKitGTK 4.1 web view in a
1280x820 GTK window, the same library and version Tauri uses on Linux,
started with the same rendering switches the app sets for itself where
there is no GPU (`CPU_RENDERING` in src-tauri/src/lib.rs). It prints
`floor-ready` once its (empty) page has loaded and its script has run, as
the app prints `corral-ready`. bench/startup.sh measures it in the same
run as the app.
"""
import os
import sys

for name, value in (("GDK_GL", "disable"), ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"), ("WEBKIT_DISABLE_COMPOSITING_MODE", "1")):
    if not os.path.exists("/dev/dri") or not any(f.startswith("renderD") for f in os.listdir("/dev/dri")):
        os.environ.setdefault(name, value)

import gi  # noqa: E402

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gtk, WebKit2  # noqa: E402


def loaded(view, event):
    if event == WebKit2.LoadEvent.FINISHED:
        view.evaluate_javascript("document.title = 'ready'", -1, None, None, None, None, None)


def titled(view, _):
    if view.get_title() == "ready":
        print("floor-ready", flush=True)


window = Gtk.Window(title="floor")
window.set_default_size(1280, 820)
window.connect("destroy", Gtk.main_quit)
view = WebKit2.WebView()
view.connect("load-changed", loaded)
view.connect("notify::title", titled)
view.load_html("<!doctype html><html><body></body></html>", "about:blank")
window.add(view)
window.show_all()
try:
    Gtk.main()
except KeyboardInterrupt:
    sys.exit(0)
