"""``python -m subtitler.models``: the models command line (subtitler.models_cli), an entry
point above the engines; nothing imports this module."""

import sys

from subtitler.models_cli import main

sys.exit(main())
