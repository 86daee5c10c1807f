"""Start the subtitler desktop app: ``python main.py`` (see README for options)."""

import sys

from subtitler.app import main

if __name__ == "__main__":
    sys.exit(main())
