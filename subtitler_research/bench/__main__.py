import sys

from subtitler_research.bench.cli import main

sys.exit(main())
