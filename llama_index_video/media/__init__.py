"""Media files in, timed raw material out, with PyAV (never a system ffmpeg).

:mod:`.probe` (what is inside, where its timeline starts), :mod:`.audio` (16 kHz mono in
bounded chunks), :mod:`.frames` (kept frames), :mod:`.clips` (clip windows and cutting),
:mod:`.names` (the media file names an index writes), :mod:`.limits` (clip limits),
:mod:`.ffmpeg` (the bundled ffmpeg binary), :mod:`.heap` (returning freed memory),
:mod:`.export` (a moment or several cut into a file to share) and
:mod:`.export_subtitles` (their subtitles as a track or burned in).
"""
