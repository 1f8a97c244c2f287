"""Subcommands of the fakit CLI: one module per command, each with register(subparsers)."""
