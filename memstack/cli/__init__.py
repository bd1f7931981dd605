"""The `memstack` command: argparse, one module per verb under `commands/`, one error boundary (`main`)."""
