import sys

from subtitler.models.cli import main

sys.exit(main())
