import sys

from subtitler.bench.cli import main

sys.exit(main())
