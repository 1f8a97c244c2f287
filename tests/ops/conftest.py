"""Operator tests run with poisoned device allocations: a kernel that reads workspace it never
wrote sees NaN instead of zeros (real device memory is not cleared; docs/emulator.md)."""

import pytest


@pytest.fixture(autouse=True)
def poisoned_device_memory(monkeypatch):
    monkeypatch.setenv("ASCEND_EMU_POISON_ALLOC", "1")
