"""The ``llama-index-video`` command: parse arguments, build options, call the library."""
