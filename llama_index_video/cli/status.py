"""The exit statuses of the command line."""

EXIT_FAILED_FILES = 1  # some files failed (each said why); the others are done
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: the reader of the output went away (`| head`)
EXIT_BUG = 70  # EX_SOFTWARE: an error the package did not expect
