import sys

from structcrawl.commands.parser import main

sys.exit(main())
