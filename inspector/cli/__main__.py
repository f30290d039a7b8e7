"""`python -m inspector.cli …` (same as `cetp-inspector …`)."""

import sys

from inspector.cli.main import main

sys.exit(main())
