"""A schema's validator is made once and kept compiled beside the schemas, as Python keeps bytecode:
a later process loads it instead of making it again (~10-40 ms a schema, in every command)."""

import os
import subprocess
import sys

import pytest

from memstack.base.resources import data_dir


def test_a_later_process_loads_the_kept_validator_and_it_still_refuses() -> None:
    if not os.access(data_dir("schemas"), os.W_OK):
        pytest.skip("the schemas are installed read-only: each process makes its validators")
    made = subprocess.run([sys.executable, "-c", "from memstack.base import schemas; schemas._fast('promotion')"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    probe = ("import fastjsonschema; fastjsonschema.compile = None  # making one again would fail\n"
             "from memstack.base import schemas\n"
             "print(schemas.errors('promotion', {'intake_id': 3}))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    assert "intake_id: 3 is not of type 'string'" in loaded.stdout
