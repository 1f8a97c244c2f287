"""Where the optional spec/reference pack lives. The repository works without it (CI clones
it alone); with it, tests also re-check the stored facts against their sources.

    specs_dir()      $FA_SPECS_DIR, default ../shared/seeds next to the repository
    reference_dir()  $FA_REFERENCE_DIR (older name: $FAKIT_CANN_REFERENCE),
                     default ../shared/reference next to the repository
"""
from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared"


def specs_dir() -> Path:
    return Path(os.environ.get("FA_SPECS_DIR", SHARED / "seeds"))


def reference_dir() -> Path:
    env = os.environ.get("FA_REFERENCE_DIR") or os.environ.get("FAKIT_CANN_REFERENCE")
    return Path(env) if env else SHARED / "reference"
