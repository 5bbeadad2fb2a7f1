import sys

from structcrawl.cli import main

sys.exit(main())
