"""The stereo benchmark's scoring and the conversations it builds."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.stereo_speakers import (
    RATE,
    conversation,
    echoed,
    in_order_recall,
    leaked,
    two_microphones,
)


def test_recall_counts_a_speakers_words_in_order_whatever_is_said_between():
    assert (
        in_order_recall("the pump keeps water moving", "The pump, hello, keeps the water moving.")
        == 1.0
    )
    assert in_order_recall(
        "the pump keeps water moving", "moving water keeps the pump"
    ) == pytest.approx(0.4)  # the pump
    assert in_order_recall("the pump keeps water moving", "") == 0.0


def test_turns_alternate_and_overlap_by_the_given_seconds():
    one = np.ones(2 * RATE, np.float32)
    left, right = conversation([(one, "a"), (one, "c")], [(one, "b")], 1.0)
    assert len(left) == len(right) == 4 * RATE  # a at 0-2 s, b at 1-3 s, c at 2-4 s
    assert left.all()
    assert not right[:RATE].any() and right[RATE : 3 * RATE].all() and not right[3 * RATE :].any()
    together = conversation([(one, "a")], [(one, "b")], None)
    assert together[0].all() and together[1].all()


def test_two_microphones_delay_quieten_low_pass_and_add_noise_of_their_own():
    tone = np.sin(2 * np.pi * 3000 * np.arange(RATE) / RATE).astype(np.float32)
    left, right = two_microphones(tone, delay_ms=10.0, gain_db=-6.0)
    assert np.array_equal(left, tone) and not right[:160].any()  # 10 ms = 160 samples
    assert np.allclose(right[160:], tone[:-160] * 10 ** (-6 / 20), atol=1e-6)
    assert np.abs(two_microphones(tone, lowpass_hz=1000.0)[1]).max() < 1e-3  # 3 kHz cut
    noisy = two_microphones(tone, snr_db=20.0)
    noise = [side - tone for side in noisy]
    assert np.sqrt(np.mean(np.square(noise[0]))) == pytest.approx(0.1 * np.sqrt(0.5), rel=0.05)
    assert abs(np.corrcoef(*noise)[0, 1]) < 0.05  # each microphone's own


def test_each_voice_leaks_into_the_other_microphone_quieter_and_later():
    voice = np.ones(RATE, np.float32)
    left, right = leaked(voice, np.zeros(RATE, np.float32), db=20.0)
    assert np.array_equal(left, voice)
    assert not right[:32].any() and np.allclose(right[32:], 0.1)  # 2 ms later, 20 dB under


def test_a_room_echoes_as_much_energy_as_the_direct_sound_fading_over_its_time():
    click = np.zeros(RATE, np.float32)
    click[0] = 1.0
    heard = echoed(click, reverb_s=0.5, seed=1)
    assert len(heard) == RATE and heard[0] == pytest.approx(1.0, abs=0.1)
    assert np.sum(np.square(heard[1:])) == pytest.approx(1.0, rel=0.1)
    assert np.abs(heard[RATE // 2 :]).max() < 1e-6  # nothing after 0.5 s (FFT rounding)
    assert not np.array_equal(heard, echoed(click, reverb_s=0.5, seed=2))  # its own room
