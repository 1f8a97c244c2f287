"""Backends that execute an operator: golden (NumPy), cpu (emulator library), sim, npu."""
