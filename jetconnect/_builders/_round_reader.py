"""One round of one processor, in an executor task: replay its record, or pull it and record it.

Two strategies, one per way a builder stream replays (docs/ARCHITECTURE.md section 3):

* :class:`~jetconnect._builders._snapshot_rounds.SnapshotRounds`, for streams with snapshot
  functions: a round streams its rows out as it pulls, then records how many items it pulled and
  the processor's snapshot after them. A replay restores the snapshot the round started from and
  pulls the same number again.
* :class:`~jetconnect._builders._log_rounds.LogRounds`, for streams that cannot replay (sockets,
  brokers): the processor lives in a receiver that spools what it receives (a write-ahead log)
  and acknowledges it upstream after; a round records the spool range it takes. A replay reads
  the range.

A reader is made per read task from what the task was given (a :class:`ProcessorRun` and a
:class:`RoundPlan`) and keeps nothing between calls: the round before, should it need completing,
is read with the plan the plan derives for it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from jetconnect._arrow_schema import to_arrow_schema
from jetconnect._builders._spec import SourceSpec
from jetconnect._options import Options
from jetconnect._round_log import Round, RoundFacts, RoundLog
from jetconnect.errors import OffsetError

log = logging.getLogger("jetconnect.source")


@dataclass(frozen=True)
class RoundPlan:
    """The round a task reads, as the driver planned it (from its range's two positions).

    ``limit`` is the round's item limit (None: none); ``previous_limit`` the limit the round before
    was planned with, for completing that round should Spark never have read it.
    """

    round: int
    limit: int | None
    previous_limit: int | None = None

    def before(self) -> RoundPlan:
        """The plan of the round before (the limit of the one before that is not known: none)."""
        return RoundPlan(self.round - 1, self.previous_limit)


@dataclass(frozen=True)
class ProcessorRun:
    """Processor ``index`` of ``total`` of the stream run ``rounds`` records, and how long it may pull."""

    spec: SourceSpec
    options: Options
    rounds: RoundLog
    index: int
    total: int
    #: How long one round may pull (``max_pull_ms``, or ``available_now_max_pull_ms`` to drain).
    max_pull_s: float
    #: How long an idle processor (or a receiver without rounds) is kept (``processor_keep_alive_ms``).
    keep_alive_s: float


class RoundReader:
    """Reads rounds of one processor (base of the two strategies)."""

    def __init__(self, run: ProcessorRun) -> None:
        self.spec = run.spec
        self.options = run.options
        self.rounds = run.rounds
        self.index = run.index
        self.total = run.total
        self.max_pull_s = run.max_pull_s
        self.keep_alive_s = run.keep_alive_s
        self.where = f"source '{run.spec.name}' processor {run.index}/{run.total}"
        self.key = (run.spec.token, run.rounds.run, run.index)
        self.arrow_schema = to_arrow_schema(run.spec.output_schema)

    def read(self, plan: RoundPlan) -> Iterator[pa.RecordBatch]:
        """The rows of ``plan.round``: exactly what its record says if it has one, else pulled now."""
        record = self.rounds.read(self.index, plan.round)
        if record is not None:
            return self.replay(plan, record)
        return self.pull(plan)

    def replay(self, plan: RoundPlan, record: Round) -> Iterator[pa.RecordBatch]:
        raise NotImplementedError

    def pull(self, plan: RoundPlan) -> Iterator[pa.RecordBatch]:
        raise NotImplementedError

    def previous(self, plan: RoundPlan) -> RoundFacts | None:
        """The facts of the round before ``plan.round`` (None before the first), completed if it never ran.

        Spark may plan a round that is never read (an action that did not need every partition);
        its successor cannot start without it, so it is pulled and recorded now.
        """
        if plan.round <= 1:
            return None
        before = plan.before()
        facts = self.rounds.facts(self.index, before.round)
        if facts is None:
            log.warning(
                "%s: round %d was planned but never read; completing it before round %d",
                self.where,
                before.round,
                plan.round,
            )
            for _ in self.pull(before):
                pass
            facts = self.rounds.facts(self.index, before.round)
            if facts is None:  # pragma: no cover - pull() records or raises
                raise OffsetError(f"{self.where}: round {before.round} could not be recorded in {self.rounds}")
        return facts


__all__ = ["ProcessorRun", "RoundPlan", "RoundReader"]
