from __future__ import annotations

import os

# No screen in CI: Qt renders offscreen unless a test starts Xvfb itself.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests never reach a model hub.
os.environ["HF_HUB_OFFLINE"] = "1"
