"""Start the subtitler desktop app: ``python main.py`` (see README for options)."""

import multiprocessing
import sys

from subtitler.app import main

if __name__ == "__main__":
    # The native engines run in worker processes ("spawn"): in the PyInstaller bundle the
    # executable is started again as such a worker, and this hands it over before the app.
    multiprocessing.freeze_support()
    sys.exit(main())
