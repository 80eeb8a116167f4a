"""settle(): a reused Python worker freezes its heap once per set of loaded modules."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_settle_freezes_again_only_after_new_modules_load() -> None:
    # In a child process: freezing is permanent, and the test process's heap is not ours to freeze.
    script = textwrap.dedent(
        """
        import gc, sys, types
        from jetconnect.spark._worker import settle

        settle()
        first = gc.get_freeze_count()
        assert first > 0, "the first task freezes what is loaded"

        garbage_holder = [[] for _ in range(1000)]
        settle()
        assert gc.get_freeze_count() == first, "no module loaded since: nothing more is frozen"

        sys.modules["jetconnect_test_new_module"] = types.ModuleType("jetconnect_test_new_module")
        settle()
        assert gc.get_freeze_count() > first, "a module loaded since the last freeze: freeze again"
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
