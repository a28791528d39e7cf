"""A fake MPRIS media player for test_providers.py, on the bus in
DBUS_SESSION_BUS_ADDRESS. Needs Debian's python3-dbus and python3-gi (run it
with /usr/bin/python3).

  fake_mpris_player.py NAME     owns org.mpris.MediaPlayer2.NAME; starts Playing

Prints "ready", then one line per call it receives ("pause", "play",
"status Playing"...). A line "play" on stdin makes it start playing (and emit
PropertiesChanged), as a user pressing play during the session would; "play
quietly" changes the status without the signal (a player that does not
announce it, found only by polling). "stall SECONDS" makes every later
PlaybackStatus read answer only after SECONDS (a player slow to answer);
each read prints "get". "stall_pause SECONDS" makes every later Pause
answer only after SECONDS.
"""

import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

PLAYER = "org.mpris.MediaPlayer2.Player"
PROPERTIES = "org.freedesktop.DBus.Properties"


class Player(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/org/mpris/MediaPlayer2")
        self.status = "Playing"
        self.stall = 0.0
        self.stall_pause = 0.0

    def set_status(self, status, announce=True):
        self.status = status
        print(f"status {status}", flush=True)
        if announce:
            self.PropertiesChanged(PLAYER, {"PlaybackStatus": status}, [])

    @dbus.service.method(PLAYER)
    def Pause(self):
        print("pause", flush=True)
        time.sleep(self.stall_pause)
        self.set_status("Paused")

    @dbus.service.method(PLAYER)
    def Play(self):
        print("play", flush=True)
        self.set_status("Playing")

    @dbus.service.method(PLAYER)
    def PlayPause(self):
        print("playpause", flush=True)
        self.set_status("Paused" if self.status == "Playing" else "Playing")

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == PLAYER and name == "PlaybackStatus":
            print("get", flush=True)
            time.sleep(self.stall)
            return dbus.String(self.status)
        raise dbus.exceptions.DBusException(f"no property {interface}.{name}",
                                            name="org.freedesktop.DBus.Error.UnknownProperty")

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"PlaybackStatus": dbus.String(self.status)} if interface == PLAYER else {}

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(f"org.mpris.MediaPlayer2.{sys.argv[1]}", bus)
    player = Player(bus)

    def on_stdin(source, condition):
        line = sys.stdin.readline()
        if not line:
            loop.quit()
            return False
        if line.strip() == "play":
            player.set_status("Playing")
        elif line.strip() == "play quietly":
            player.set_status("Playing", announce=False)
        elif line.startswith("stall_pause "):
            player.stall_pause = float(line.split()[1])
        elif line.startswith("stall "):
            player.stall = float(line.split()[1])
        return True

    loop = GLib.MainLoop()
    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_stdin)
    print("ready", flush=True)
    loop.run()
    del name


if __name__ == "__main__":
    main()
