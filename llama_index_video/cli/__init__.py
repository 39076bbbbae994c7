"""The ``llama-index-video`` command: parse arguments, build options, call the library.

:mod:`.main` runs a command and turns the package's errors into one line and an exit
status; :mod:`.parser` builds the argument parser (every subcommand and option);
:mod:`.commands` holds what each subcommand does; :mod:`.progress` the progress bars.
"""
