import sys

from limitguard.cli.main import main

sys.exit(main())
