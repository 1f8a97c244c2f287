"""Where the optional spec/reference pack lives. The repository works without it (CI clones
it alone); with it, tests also re-check the stored facts against their sources.

    specs_dir()      $FA_SPECS_DIR, default <repo>/.spec-pack/seeds
    reference_dir()  $FA_REFERENCE_DIR (older name: $FAKIT_CANN_REFERENCE),
                     default <repo>/.spec-pack/reference

The pack is the five operator specifications (the aclnn API pages of hicann/ops-transformer,
`attention/*/docs/aclnn*.md`) and the reference pages they link; `.spec-pack/` is ignored by
git, so a developer who has the pack links it there or sets the variables.
"""

from __future__ import annotations

import os
from pathlib import Path

PACK = Path(__file__).resolve().parents[2] / ".spec-pack"


def specs_dir() -> Path:
    return Path(os.environ.get("FA_SPECS_DIR", PACK / "seeds"))


def reference_dir() -> Path:
    env = os.environ.get("FA_REFERENCE_DIR") or os.environ.get("FAKIT_CANN_REFERENCE")
    return Path(env) if env else PACK / "reference"
