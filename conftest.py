"""Every pytest run of the course, however it is started, runs under the course's numeric environment.

tools/test.sh exports it too; this makes a direct ``pytest --nbval chapters/...`` start its kernels under the
same pin, since a kernel inherits the environment of the pytest process that starts it (see
tools/numeric_env.py for what is pinned and why).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()

# The test command's schedule over the cores and its record of where the time goes (issue 31).
pytest_plugins = ["pytest_schedule"]
