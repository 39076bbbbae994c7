"""A real RTSP server on loopback: GStreamer's ``gst-rtsp-server`` playing one WAV file.

Run by the system Python, which has the GObject bindings (Debian: ``python3-gi``,
``gir1.2-gst-rtsp-server-1.0``, ``gstreamer1.0-plugins-good``; scripts/test.sh installs
them), not the project's virtualenv:

    /usr/bin/python3 tests/rtsp_server.py FILE.wav PORT

serves ``rtsp://127.0.0.1:PORT/live``: the file's audio as 16-bit PCM at 16 kHz
(RTP L16, lossless), played at real time from when the first client connects, to every
client at once (a shared media: a client that connects later hears it from then on).
When the file ends the server sends the end of the stream (RTCP BYE). It prints
``ready`` once it listens, and serves until it is terminated.
"""

from __future__ import annotations

import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

PIPELINE = (
    "( filesrc location={path} ! wavparse ! audioconvert ! audioresample "
    "! audio/x-raw,rate=16000,channels=1 ! rtpL16pay name=pay0 pt=96 )"
)


def main() -> int:
    path, port = sys.argv[1], sys.argv[2]
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_launch(PIPELINE.format(path=path))
    factory.set_shared(True)
    server.get_mount_points().add_factory("/live", factory)
    if server.attach(None) == 0:
        print(f"cannot listen on 127.0.0.1:{port}", file=sys.stderr)
        return 1
    print("ready", flush=True)
    GLib.MainLoop().run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
