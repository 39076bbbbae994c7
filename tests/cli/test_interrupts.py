"""A Ctrl-C that a library catches is raised again at ingest's next check.

``ingest`` interrupted just after a file's line went on to its end 2 or 3 times in 20
(a real SIGINT sent 0-6 s after the line, real recordings, 2 cores): the interrupt was
lost where it was raised. Here a library's broad ``except`` is played by the test.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from llama_index_video.cli.interrupts import Interrupts


def test_a_sigint_a_library_swallowed_is_raised_again_at_the_next_check():
    assert threading.current_thread() is threading.main_thread()  # signals go there only
    before = signal.getsignal(signal.SIGINT)
    with Interrupts() as interrupts:
        interrupts.check()  # nothing came yet
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises here, at once
            raise AssertionError("SIGINT did not interrupt")
        except KeyboardInterrupt:
            pass  # what a library catching every error does
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    assert signal.getsignal(signal.SIGINT) is before


def test_elsewhere_than_the_main_thread_a_check_raises_nothing():
    with Interrupts() as interrupts:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass
        raised: list[BaseException] = []

        def check() -> None:
            try:
                interrupts.check()
            except BaseException as exc:  # what the check raised, if any
                raised.append(exc)

        worker = threading.Thread(target=check)
        worker.start()
        worker.join()
        assert raised == []
