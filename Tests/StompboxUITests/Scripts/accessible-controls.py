#!/usr/bin/python3
"""Prints every named control of the running Stompbox window as AT-SPI sees it:
role<TAB>name<TAB>value<TAB>range
value: AtkValue's text (or the "valuetext" attribute, where Orca reads it) when the control
has one (else its number), else its description;
range: "minimum maximum increment current" for controls with AtkValue, else empty.
With --set NAME VALUE it sets that control's value through AtkValue instead (exit 0 when
the control took it)."""
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
        if setting is not None:
            if name == setting[0]:
                iface = node.get_value_iface()
                sys.exit(0 if iface is not None and iface.set_current_value(float(setting[1])) else 1)
        else:
            value = ""
            extent = ""
            try:
                iface = node.get_value_iface()
                if iface is not None:
                    text = ""
                    try:
                        text = iface.get_text() or ""
                    except Exception:
                        pass
                    if not text:
                        try:
                            text = (node.get_attributes() or {}).get("valuetext", "")
                        except Exception:
                            pass
                    value = text or "%g" % iface.get_current_value()
                    extent = "%g %g %g %g" % (iface.get_minimum_value(), iface.get_maximum_value(),
                                              iface.get_minimum_increment(), iface.get_current_value())
            except Exception:
                pass
            if not value:
                value = node.get_description() or ""
            print(f"{role}\t{name}\t{value}\t{extent}")
    for i in range(node.get_child_count()):
        walk(node.get_child_at_index(i), depth + 1)


setting = sys.argv[2:4] if len(sys.argv) >= 4 and sys.argv[1] == "--set" else None


deadline = time.time() + 20
while time.time() < deadline:
    desktop = Atspi.get_desktop(0)
    apps = [desktop.get_child_at_index(i) for i in range(desktop.get_child_count())]
    apps = [a for a in apps if a is not None and "stompbox" in (a.get_name() or "").lower()]
    if apps and apps[0].get_child_count() > 0:
        walk(apps[0])
        sys.exit(0 if setting is None else 2)
    time.sleep(0.5)
print("no stompbox application on the accessibility bus", file=sys.stderr)
sys.exit(1)
