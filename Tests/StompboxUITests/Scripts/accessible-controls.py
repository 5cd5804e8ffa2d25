#!/usr/bin/python3
"""Prints every named control of the running Stompbox window as AT-SPI sees it:
role<TAB>name<TAB>value (AtkValue when the control has one, else its description)."""
import sys
import time
import gi
gi.require_version("Atspi", "2.0")
from gi.repository import Atspi


def walk(node, depth=0):
    if node is None or depth > 40:
        return
    try:
        name = node.get_name() or ""
        role = node.get_role_name()
    except Exception:
        return
    if name:
        value = ""
        try:
            iface = node.get_value_iface()
            if iface is not None:
                value = "%g" % iface.get_current_value()
        except Exception:
            pass
        if not value:
            value = node.get_description() or ""
        print(f"{role}\t{name}\t{value}")
    for i in range(node.get_child_count()):
        walk(node.get_child_at_index(i), depth + 1)


deadline = time.time() + 20
while time.time() < deadline:
    desktop = Atspi.get_desktop(0)
    apps = [desktop.get_child_at_index(i) for i in range(desktop.get_child_count())]
    apps = [a for a in apps if a is not None and "stompbox" in (a.get_name() or "").lower()]
    if apps and apps[0].get_child_count() > 0:
        walk(apps[0])
        sys.exit(0)
    time.sleep(0.5)
print("no stompbox application on the accessibility bus", file=sys.stderr)
sys.exit(1)
