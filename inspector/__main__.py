"""`python -m inspector …` (same as `cetp-inspector …`)."""

import sys

from inspector.cli.main import main

sys.exit(main())
