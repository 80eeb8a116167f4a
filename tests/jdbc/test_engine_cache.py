"""One engine per URL and process: reused by later tasks, never shared with a forked worker."""

from __future__ import annotations

import os
import signal

import sqlalchemy as sa

from jetconnect_jdbc.engines import dispose_all, engine_for


def _in_child(body) -> int:
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(20)
            code = 0 if body() else 3
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 2
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_forked_worker_builds_its_own_engine_and_the_parents_keeps_working(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    parent = engine_for(url)
    assert engine_for(url) is parent  # the next task of this process reuses it
    with parent.begin() as conn:
        conn.exec_driver_sql("create table t (n integer)")
        conn.exec_driver_sql("insert into t values (1)")
    pooled = parent.pool.checkedin()

    def child() -> bool:
        mine = engine_for(url)
        with mine.begin() as conn:
            conn.exec_driver_sql("insert into t values (2)")
        return mine is not parent and parent.pool.checkedin() == pooled

    assert _in_child(child) == 0
    with parent.connect() as conn:
        assert sorted(conn.execute(sa.text("select n from t")).scalars()) == [1, 2]
    dispose_all()
    assert engine_for(url) is not parent
    dispose_all()
